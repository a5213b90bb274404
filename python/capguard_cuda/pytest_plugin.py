"""capguard's pytest plugin: under `capguard run -- pytest ...` it marks where each test begins
and ends, so that the report names the test each finding was made in (text "in test ...", a
JUnit test case per test, JSON and SARIF `test`). Load it with `pytest -p capguard_cuda.pytest_plugin`,
or, where the capguard package is installed, with `pytest --capguard`.

The marks go to capguard.<pid>.tests in $CAPGUARD_TRACE_DIR, beside the process's trace, one
line per boundary, timed on the trace's clock (CLOCK_MONOTONIC: time.monotonic_ns()):

    capguard-test-begin <time-ns> <pid> <nodeid>
    capguard-test-end <time-ns> <pid> <nodeid>

Which findings fail the run is capguard's exit status (--fail-on), after the analysis: the
findings are only known once pytest has exited."""

import os
import re
import socket
import time

import pytest

_ENV = "CAPGUARD_TRACE_DIR"
_MAX_NODEID_BYTES = 4000  # the analyzer ignores longer lines (engine/test_marks.h: 4096)
_NOT_ATTACHED = ("capguard: not attached: {} is unset, so no finding can be attributed to a "
                 "test; run `capguard run -- pytest ...`").format(_ENV)


def pytest_addoption(parser):
    parser.getgroup("capguard").addoption(
        "--capguard", action="store_true", default=False,
        help="mark test boundaries for capguard (under `capguard run -- pytest ...`); say so "
             "when capguard is not attached")


def _asked_for(config):
    """Whether the user asked for the plugin (--capguard or -p), rather than it being loaded
    only because the package is installed: then pytest runs without capguard are pointed out."""
    plugins = getattr(config.option, "plugins", None) or []
    return config.getoption("capguard") or "capguard_cuda.pytest_plugin" in plugins


def _file_name_host():
    """The host as the interposer puts it into the trace's name (trace/writer.h, file_name_host):
    CAPGUARD_HOST or the host name, bytes outside [A-Za-z0-9._-] as '_' (a leading '.' too),
    at most 64 bytes."""
    host = os.environ.get("CAPGUARD_HOST") or socket.gethostname()
    name = re.sub(rb"[^A-Za-z0-9._-]", b"_", host.encode("utf-8", "replace")[:255])[:64]
    return (b"_" + name[1:] if name.startswith(b".") else name).decode()


def _marks_path():
    """capguard.<pid>.<host>.tests beside capguard.<pid>.<host>.trace: nodes sharing a trace
    directory may share a pid."""
    directory = os.environ.get(_ENV)
    if not directory:
        return None
    host = _file_name_host()
    name = "capguard.{}.{}.tests".format(os.getpid(), host) if host else "capguard.{}.tests".format(os.getpid())
    return os.path.join(directory, name)


def _mark(what, nodeid):
    path = _marks_path()
    if path is None:
        return
    name = " ".join(nodeid.split("\n")).replace("\r", " ")
    name = name.encode("utf-8", "replace")[:_MAX_NODEID_BYTES].decode("utf-8", "ignore")
    line = "capguard-test-{} {} {} {}\n".format(what, time.monotonic_ns(), os.getpid(), name)
    # One write per line, appended: a test that kills the process leaves its begin behind.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def pytest_configure(config):
    if _asked_for(config) and not os.environ.get(_ENV):
        config.issue_config_time_warning(pytest.PytestConfigWarning(_NOT_ATTACHED), stacklevel=2)


def pytest_report_header(config):
    if os.environ.get(_ENV):
        return "capguard: attached, marking test boundaries in {}".format(_marks_path())
    return _NOT_ATTACHED if _asked_for(config) else None


def pytest_runtest_logstart(nodeid, location):
    _mark("begin", nodeid)


def pytest_runtest_logfinish(nodeid, location):
    _mark("end", nodeid)
