"""Where the lake and the indexes live: the home's own folders, or a prefix of an S3-compatible bucket
(the `storage_uri` setting), with the inputs logs (remember, forget, access: `memlake.inputs`) beside them, so
that every process on every host that reads the store also sees every write. Everything else of a home (landing,
quarantine, caches, Dagster) stays local.

A `Store` is one folder on one pyarrow filesystem; the lake (`memlake.lake.Lake`), the inputs logs, the change
marks (`memlake.changes`) and LanceDB (`memlake.vectors`) read and write through it. The object store's endpoint,
region and keys come from the settings (`s3_*`), else the standard AWS_* variables; the secret key is held
only in the filesystem and the LanceDB options, never in a message, a log line or a file of the home.
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from memlake.atomic_files import write_parquet_atomically, write_text_atomically
from memlake.settings import Settings


class ObjectStorageUnsupported(ValueError):
    """An operation that only works on the home's own folders, asked of a home whose lake is in object storage."""


@dataclass(frozen=True)
class Store:
    """A folder: `path` on `filesystem` (a local path, or `bucket/prefix` of an S3 filesystem). `uri` names it
    for LanceDB and for messages; `options` are LanceDB's storage options (they hold the keys: never printed)."""

    filesystem: pafs.FileSystem
    path: str
    uri: str
    options: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    @property
    def local(self) -> bool:
        return isinstance(self.filesystem, pafs.LocalFileSystem)

    @classmethod
    def folder(cls, path: str | Path) -> Store:
        """A local folder."""
        return cls(pafs.LocalFileSystem(), str(path), str(path))

    def file(self, *parts: str) -> str:
        """The filesystem path of a file in this folder."""
        return "/".join((self.path, *parts))

    def child(self, name: str) -> Store:
        """The folder `name` inside this one, on the same filesystem."""
        return Store(self.filesystem, self.file(name), f"{self.uri}/{name}", self.options)

    def names(self, suffix: str) -> list[str]:
        """The names of the files directly here ending in `suffix`, sorted; hidden names (a local write's
        temporary file) left out."""
        if self.local:
            if not Path(self.path).is_dir():
                return []
            found = (entry.name for entry in os.scandir(self.path))
        else:
            selector = pafs.FileSelector(self.path, allow_not_found=True)
            found = (info.base_name for info in self.filesystem.get_file_info(selector)
                     if info.type == pafs.FileType.File)
        return sorted(name for name in found if name.endswith(suffix) and not name.startswith("."))

    def delete(self, name: str) -> None:
        """File `name` here removed (nothing when it is missing)."""
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_file(self.file(name))

    def exists(self) -> bool:
        """Whether anything was ever written here (on an object store a folder is only its objects' prefix)."""
        if self.local:
            return Path(self.path).is_dir()
        return self.filesystem.get_file_info(self.path).type != pafs.FileType.NotFound

    def read_text(self, name: str) -> str:
        """The text of file `name` here ("" when it is missing)."""
        try:
            with self.filesystem.open_input_stream(self.file(name)) as stream:
                return stream.read().decode()
        except FileNotFoundError:
            return ""

    def write_text(self, name: str, text: str) -> None:
        """`name` here replaced whole: swapped in by a rename locally; one PUT of the whole object on S3."""
        if self.local:
            Path(self.path).mkdir(parents=True, exist_ok=True)
            write_text_atomically(Path(self.path) / name, text)
        else:
            write_object(self.filesystem, self.file(name), text.encode())


def write_object(filesystem: pafs.FileSystem, path: str, data: bytes) -> None:
    """`data` as the object at `path`, whole: it is in memory before the upload starts, and S3 shows an object
    only once its upload completes (a PUT, or the last step of a multipart upload), so a reader sees the old
    object or the new one and a writer killed part-way leaves the old one."""
    with filesystem.open_output_stream(path) as stream:
        stream.write(data)


def write_parquet_whole(store: Store, path: str, data: pa.Table) -> None:
    """`data` as the Parquet file `path` of `store`, whole or not at all: swapped in by a rename on a local disk,
    one whole object on an object store (which has no rename, and shows an object only once it is complete)."""
    if store.local:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomically(Path(path), data)
        return
    buffer = pa.BufferOutputStream()
    pq.write_table(data, buffer, compression="zstd")
    write_object(store.filesystem, path, buffer.getvalue().to_pybytes())


def lake_store(settings: Settings) -> Store:
    """Where the home's lake is: `<storage_uri>/lake`, or the home's lake folder."""
    return _home_store(settings, "lake", settings.lake_dir)


def index_store(settings: Settings) -> Store:
    """Where the home's LanceDB indexes are: `<storage_uri>/lancedb`, or the home's lancedb folder."""
    return _home_store(settings, "lancedb", settings.lancedb_dir)


def landing_store(settings: Settings) -> Store:
    """Where conversations sent to a replica wait for a run (`memlake.landing_inbox`): `<storage_uri>/landing`,
    or the home's landing folder."""
    return _home_store(settings, "landing", settings.landing_dir)


def inputs_store(settings: Settings) -> Store:
    """Where the home's inputs logs are: `<storage_uri>/inputs` (every replica's writes reach every run), or
    the home's inputs folder."""
    return _home_store(settings, "inputs", settings.inputs_dir)


def _home_store(settings: Settings, name: str, local: Path) -> Store:
    if not settings.storage_uri:
        return Store.folder(local)
    s3 = _s3_settings(settings)
    split = urlsplit(settings.storage_uri)
    path = f"{split.netloc}{split.path}".rstrip("/") + f"/{name}"
    return Store(_s3_filesystem(s3), path, f"{settings.storage_uri}/{name}", _lancedb_options(s3))


@dataclass(frozen=True)
class _S3:
    endpoint: str
    region: str
    access_key: str
    secret_key: str = field(repr=False)


def _s3_settings(settings: Settings) -> _S3:
    """The object store's settings, each from the home's settings, else its standard AWS_* variable."""
    return _S3(
        endpoint=settings.s3_endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get(
            "AWS_ENDPOINT_URL", ""),
        region=settings.s3_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1",
        access_key=settings.s3_access_key_id or os.environ.get("AWS_ACCESS_KEY_ID", ""),
        secret_key=settings.s3_secret_access_key.get_secret_value() or os.environ.get("AWS_SECRET_ACCESS_KEY", ""),
    )


@functools.lru_cache(maxsize=8)  # one client per store, not one per read of a change mark
def _s3_filesystem(s3: _S3) -> pafs.S3FileSystem:
    options: dict[str, object] = {"region": s3.region}
    if s3.endpoint:
        endpoint = urlsplit(s3.endpoint)
        options.update(endpoint_override=endpoint.netloc or endpoint.path, scheme=endpoint.scheme or "https")
    if s3.access_key:
        options.update(access_key=s3.access_key, secret_key=s3.secret_key)
    return pafs.S3FileSystem(**options)  # type: ignore[arg-type]


def _lancedb_options(s3: _S3) -> dict[str, str]:
    """LanceDB's (object_store's) names for the same settings."""
    options = {"region": s3.region}
    if s3.endpoint:
        options["endpoint"] = s3.endpoint
        if s3.endpoint.startswith("http://"):
            options["allow_http"] = "true"
    if s3.access_key:
        options.update(aws_access_key_id=s3.access_key, aws_secret_access_key=s3.secret_key)
    return options
