"""The `storage_uri` setting: what it accepts, and that the object store's secret key is in no printed form of the
settings. The lake and indexes on an S3-compatible server, read back, rerun and recovered after a kill, are shown
by tests/scale/test_scale_out.py (with the Dagster instance on PostgreSQL)."""

import pytest

from memlake.settings import load_settings
from tests.scale.object_storage import SECRET_KEY

BUCKET = "memlake-test"


def test_a_storage_uri_other_than_s3_is_refused_with_the_setting_named(tmp_path):
    for uri in ("ftp://somewhere/else", "s3://", "s3:///prefix", "lake-folder"):
        with pytest.raises(ValueError, match=r"storage_uri .*s3://bucket/prefix"):
            load_settings(tmp_path, storage_uri=uri)
    assert load_settings(tmp_path, storage_uri="s3://bucket/team-a/").storage_uri == "s3://bucket/team-a"
    assert load_settings(tmp_path).storage_uri == ""  # the home's own folders, as before


def test_the_secret_key_is_in_no_printed_form_of_the_settings(tmp_path):
    settings = load_settings(tmp_path, storage_uri=f"s3://{BUCKET}/x", s3_secret_access_key=SECRET_KEY)
    assert SECRET_KEY not in repr(settings) and SECRET_KEY not in settings.model_dump_json()
