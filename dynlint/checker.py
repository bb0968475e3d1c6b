"""Placeholder: the one-pass ast analyzer is being written."""


def analyze(tree, lines, dynamic_ops=()):
    return []
