"""Shared by the Python testcases: a small model step and a guard that reports, rather than
raises, the error a broken capture produces (the mistake is intentional)."""
import torch


def report(what, fn):
    try:
        fn()
        print(f"{what}: ok")
    except Exception as exc:  # the broken capture surfaces here, at the wrong line
        print(f"{what}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
