"""A self-contained HTML page for a RecompileReport: inline CSS and SVG, no scripts, no network.

The chart is a grid: one row per module that recompiled for a reason worth a
look (root causes first), one column per step (steps are binned when there are
many), each cell coloured by what happened there, so the dynamic module stands
out at a glance.  Modules that only ever recompiled for a new input shape
(often most of a detection model) share one collapsed row, named in a list
below it.
"""

from __future__ import annotations

import html

from dynlint.runtime.report import steps_text

MAX_COLUMNS = 120
COLORS = {"root": "#d62728", "child": "#ff9f40", "other": "#b39ddb", "input": "#9ecae1", "none": "#f3f3f3"}
LEGEND = (("root", "dynamic: recompiled with an input shape it had seen (root cause)"),
          ("child", "recompiled because a dynamic module inside it did"),
          ("other", "mode switch, changed attribute, or a graph break not caused by shapes"),
          ("input", "recompiled for a new input shape"))
INPUT_ONLY_ROW = "(input shapes only)"


def _input_only(event) -> bool:
    return event.new_in and not event.dynamic and event.comment.startswith("Recompiled due to new input shape")


def _cell_kind(events) -> str:
    if any(e.root for e in events):
        return "root"
    if any(e.dynamic for e in events):
        return "child"
    if any(not _input_only(e) for e in events):
        return "other"
    return "input" if events else "none"


def render_report(report) -> str:
    esc = html.escape
    counts = report.recompile_counts()
    dynamic = report.dynamic_modules()
    notable = {e.path for e in report.events if not _input_only(e)}
    input_only = [p for p, _ in counts if p not in notable]
    rows = dynamic + [p for p, _ in counts if p not in dynamic and p in notable]
    if input_only:
        rows.append(INPUT_ONLY_ROW)
    steps = max(report.steps, max((e.step + 1 for e in report.events), default=0), 1)
    bin_size = -(-steps // MAX_COLUMNS)
    columns = -(-steps // bin_size)

    cells: dict[tuple[str, int], list] = {}
    per_column = [0] * columns
    input_only_set = set(input_only)
    for event in report.events:
        column = min(event.step // bin_size, columns - 1)
        row = INPUT_ONLY_ROW if event.path in input_only_set else event.path
        cells.setdefault((row, column), []).append(event)
        per_column[column] += 1

    label_width = min(max((len(p) for p in rows), default=10) * 7 + 16, 420)
    cell_w = max(6, min(28, 720 // columns))
    cell_h = 22
    bar_h = 60
    top = bar_h + 24
    width = label_width + columns * cell_w + 20
    height = top + len(rows) * cell_h + 40
    peak = max(per_column, default=0) or 1

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="recompiles per step and module" font-family="sans-serif" font-size="12">']
    # Bars on top: recompiles per step, all modules together.
    svg.append('<text x="4" y="14" fill="#333">recompiles per step</text>')
    for column, total in enumerate(per_column):
        if total:
            h = max(2, round(bar_h * total / peak))
            x = label_width + column * cell_w
            svg.append(f'<rect x="{x + 1}" y="{bar_h + 18 - h}" width="{cell_w - 2}" height="{h}" fill="#6b6b6b">'
                       f'<title>{_step_label(column, bin_size)}: {total} recompile(s)</title></rect>')
    for index, path in enumerate(rows):
        y = top + index * cell_h
        weight = "bold" if path in dynamic else "normal"
        label = path if len(path) * 7 <= label_width - 16 else "…" + path[-((label_width - 16) // 7 - 1):]
        svg.append(f'<text x="{label_width - 8}" y="{y + 15}" text-anchor="end" font-weight="{weight}">'
                   f'{esc(label)}<title>{esc(path)}</title></text>')
        for column in range(columns):
            events = cells.get((path, column), [])
            kind = _cell_kind(events)
            x = label_width + column * cell_w
            tip = f"{path}, {_step_label(column, bin_size)}: "
            if path == INPUT_ONLY_ROW and events:
                tip += f"{len({e.path for e in events})} module(s) recompiled for a new input shape"
            else:
                tip += "; ".join(sorted({e.full_comment() for e in events})) if events else "no recompile"
            svg.append(f'<rect x="{x + 1}" y="{y + 2}" width="{cell_w - 2}" height="{cell_h - 4}" rx="2" '
                       f'fill="{COLORS[kind]}"><title>{esc(tip)}</title></rect>')
    axis_y = top + len(rows) * cell_h + 16
    for column in range(0, columns, max(1, columns // 10)):
        x = label_width + column * cell_w + cell_w / 2
        svg.append(f'<text x="{x}" y="{axis_y}" text-anchor="middle" fill="#555">{column * bin_size}</text>')
    binned = f" (binned by {bin_size})" if bin_size > 1 else ""
    svg.append(f'<text x="{label_width}" y="{axis_y + 18}" fill="#555">step{binned}</text>')
    svg.append("</svg>")

    legend = "".join(f'<span class="key"><span class="swatch" style="background:{COLORS[k]}"></span>'
                     f'{esc(t)}</span>' for k, t in LEGEND)
    first_cause = {}
    for event in report.events:
        if event.root and event.cause:
            first_cause.setdefault(event.path, event.cause)
    verdict = (f'<p class="verdict">Root cause{"s" if len(dynamic) > 1 else ""}: '
               + "; ".join(f"<code>{esc(p)}</code>" + (f" — {esc(first_cause[p])}" if p in first_cause else "")
                           for p in dynamic) + "</p>") if dynamic else \
        '<p class="verdict ok">No dynamic module: every recompile followed a new input shape.</p>'
    rank_note = f" · ranks {', '.join(str(r) for r in sorted(report.per_rank))}" if report.per_rank else ""
    step_table = _table(report.step_header(), report.step_rows(), highlight_col=report.step_header().index("Comment"))
    summary_table = _table(report.summary_header(), report.summary_rows())
    collapsed = ""
    if input_only:
        collapsed = (f"<details><summary>{len(input_only)} module(s) recompiled only for new input shapes "
                     f"(row <code>{esc(INPUT_ONLY_ROW)}</code>)</summary><p>"
                     + ", ".join(f"<code>{esc(p)}</code>" for p in input_only) + "</p></details>")

    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dynlint recompilation report</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px; color: #222; max-width: 1400px; }}
.chart svg {{ max-width: none; }}
h1 {{ font-size: 20px; margin: 0 0 4px; }} h2 {{ font-size: 16px; margin: 28px 0 8px; }}
.meta {{ color: #666; margin: 0 0 12px; }}
.verdict {{ font-size: 15px; padding: 8px 12px; background: #fdecea;
           border-left: 4px solid {COLORS["root"]}; }}
.verdict.ok {{ background: #eef6ee; border-color: #4c9a4c; }}
.key {{ margin-right: 18px; white-space: nowrap; }}
.swatch {{ display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px;
           border-radius: 2px; }}
table {{ border-collapse: collapse; font-size: 13px; width: 100%; table-layout: auto; }}
th, td {{ border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top;
          overflow-wrap: anywhere; word-break: break-word; max-width: 40em; }}
th {{ background: #f5f5f5; position: sticky; top: 0; }}
tr.root td {{ background: #fdecea; }}
td.num {{ text-align: right; }}
code {{ font-size: 13px; }}
.chart {{ overflow-x: auto; }}
</style></head><body>
<h1>dynlint recompilation report</h1>
<p class="meta">{esc(report.backend)} backend · {esc(steps_text(report.steps))} · {len(report.events)} recompile event(s)\
{rank_note}</p>
{verdict}
<h2>Recompiles per step and module</h2>
<p>{legend}</p>
<div class="chart">{"".join(svg)}</div>
{collapsed}
<h2>Recompile count</h2>
{summary_table}
<h2>Per step</h2>
{step_table}
</body></html>
"""


def _step_label(column: int, bin_size: int) -> str:
    if bin_size == 1:
        return f"step {column}"
    return f"steps {column * bin_size}-{(column + 1) * bin_size - 1}"


def _table(header, rows, highlight_col=None) -> str:
    esc = html.escape
    out = ["<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for row in rows:
        is_root = highlight_col is not None and "Maybe dyn ops" in row[highlight_col] \
            and "dynamic child" not in row[highlight_col]
        cls = ' class="root"' if is_root else ""
        out.append(f"<tr{cls}>" + "".join(
            f'<td class="num">{esc(c)}</td>' if c.isdigit() else f"<td>{esc(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)
