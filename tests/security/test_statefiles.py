"""The state-file primitives under the CLI tests: every way a write fails keeps the old file
and leaves no temp file; a shared sticky folder is no home."""

from __future__ import annotations

import os

import pytest

from ikigai_core.errors import ConfigError
from ikigai_core.statefiles import (
    MAX_STATE_BYTES,
    WriteError,
    _own_group,
    ikigai_home,
    parse_json,
    read_cache,
    read_json,
    read_state,
    refuse_exposed,
    write_private_json,
)
from tests.support import mounts


def test_a_folder_that_cannot_be_made_is_one_write_error(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(WriteError, match=r"^cannot write .*/file/x\.json: Not a directory$") as exc:
        write_private_json(tmp_path / "file" / "x.json", {})
    assert isinstance(exc.value, OSError) and exc.value.strerror == "Not a directory"


def test_data_that_is_not_json_keeps_the_old_file_and_no_temp_file(tmp_path):
    (tmp_path / "x.json").write_text("old")
    with pytest.raises(TypeError):
        write_private_json(tmp_path / "x.json", {"x": object()})
    assert (tmp_path / "x.json").read_text() == "old" and os.listdir(tmp_path) == ["x.json"]


def test_a_shared_sticky_folder_is_no_home(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    with pytest.raises(ConfigError, match="mode 1777.*set IKIGAI_HOME to a folder of your own"):
        ikigai_home({"IKIGAI_HOME": str(shared)})


def test_a_group_writable_file_of_a_group_nobody_knows_is_refused(tmp_path):
    unknown = 54321
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chown(path, -1, unknown)
    path.chmod(0o660)
    with pytest.raises(ConfigError, match=r"mode 660\); ikigai refuses it: `chmod go-w "):
        refuse_exposed(path)


def test_a_file_of_another_user_is_refused(tmp_path):
    path = tmp_path / "trust.json"
    path.write_text("{}")
    os.chown(path, 65534, -1)
    with pytest.raises(ConfigError, match=r"belongs to another user \(uid 65534\)"):
        read_json(path, None)


@pytest.mark.parametrize(("content", "error"), [
    (None, "cannot read .*: Is a directory"),
    (b" " * (MAX_STATE_BYTES + 1), "is over 4 MiB"),
])
def test_a_state_file_that_is_a_directory_or_too_big_is_one_error(tmp_path, content, error):
    path = tmp_path / "permissions.json"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    with pytest.raises(ConfigError, match=error):
        read_state(path)


def test_nesting_too_deep_for_python_is_bad_json(tmp_path):
    nested = b"[" * 100_000 + b"]" * 100_000
    with pytest.raises(ValueError, match="nested too deeply"):
        parse_json(nested)
    (tmp_path / "trust.json").write_bytes(nested)
    assert read_json(tmp_path / "trust.json", "missing") is None
    assert read_state(tmp_path / "trust.json" / "x") is None  # under a file: no such file


def test_a_full_disk_keeps_the_old_file_and_no_temp_file(tmp_path):
    with mounts.tiny_fs(tmp_path / "tiny") as disk:
        (disk / "x.json").write_text("old")
        mounts.fill(disk)
        with pytest.raises(WriteError, match="No space left on device"):
            write_private_json(disk / "x.json", {"rules": ["x" * 8192]})
        assert (disk / "x.json").read_text() == "old"
        assert sorted(os.listdir(disk)) == ["filler", "x.json"]


def test_a_cache_others_could_write_is_no_cache(tmp_path):
    cache = tmp_path / "schemas.json"
    cache.write_text('{"version": 1, "entries": {"x": {}}}')
    assert read_cache(cache, 1, "entries") == {"x": {}}
    cache.chmod(0o666)
    assert read_cache(cache, 1, "entries") == {}


def test_a_group_of_your_own_may_write_a_state_file(tmp_path):
    if not _own_group(os.getegid()):
        pytest.skip("your primary group has other members here")
    path = tmp_path / "config.json"
    path.write_text("{}")
    os.chown(path, -1, os.getegid())
    path.chmod(0o660)
    assert read_json(path, None) == {}
