"""What each reader of a file's name makes of it, pinned on real names (the twelfth real folder,
/tmp/rf12, and this machine's /usr/share): the title a document made of a file gets
(kgrag.ingest.parsers, the citation label's comparison), the words of a title as an identifier
(kgrag.agent.support.leads, kgrag.agent.rows), the words of a row's file name
(kgrag.agent.rows.table_names) and of a file's folder (kgrag.agent.support.leads). One
function, kgrag.text.file_names.spaced_name, reads the separators for all of them; each keeps
the reading it had (pinned before it was made one)."""

from __future__ import annotations

from pathlib import PurePath

import pytest

from kgrag.text.file_names import file_words, folder_words, spaced_name

#: path -> (title of its stem, the title's words, the file's words, the folder's words)
NAMES = {
    "/tmp/rf12/monitoring/node exporter/V0_16_UPGRADE_GUIDE.md": (
        "V0 16 UPGRADE GUIDE",
        "V0 16 UPGRADE GUIDE",
        "V0 16 UPGRADE GUIDE",
        "node exporter",
    ),
    "/tmp/rf12/monitoring/node exporter/README.md.gz": (
        "README.md",
        "README md",
        "README",
        "node exporter",
    ),
    "/tmp/rf12/man pages/pg_lsclusters.1.gz": (
        "pg lsclusters.1",
        "pg lsclusters 1",
        "pg lsclusters",
        "man pages",
    ),
    "/tmp/rf12/man pages/sources.list.5.gz": (
        "sources.list.5",
        "sources list 5",
        "sources list",
        "man pages",
    ),
    "/tmp/rf12/data tables/iso_15924.json": ("iso 15924", "iso 15924", "iso 15924", "data tables"),
    "/tmp/rf12/old copies/releases (copy).csv": (
        "releases (copy)",
        "releases (copy)",
        "releases (copy)",
        "old copies",
    ),
    "/tmp/rf12/databases/pg_hba.conf.sample": (
        "pg hba.conf",
        "pg hba conf",
        "pg hba conf",
        "databases",
    ),
    "/tmp/rf12/debian notes/misc/hunspell-en-us NEWS.Debian.gz": (
        "hunspell-en-us NEWS.Debian",
        "hunspell-en-us NEWS Debian",
        "hunspell-en-us NEWS",
        "misc",
    ),
    "/usr/share/doc/gcc-12-base/C++/libstdc++_symbols.txt.amd64": (
        "libstdc++_symbols.txt",
        "libstdc symbols txt",
        "libstdc symbols txt",
        "C",
    ),
    "/usr/share/doc/gcc-12-base/C++/changelog.libstdc++.gz": (
        "changelog.libstdc++",
        "changelog libstdc",
        "changelog",
        "C",
    ),
    "/usr/share/doc/openjdk-17-jre-headless/test-amd64/failed_tests-hotspot.tar.gz": (
        "failed tests-hotspot.tar",
        "failed tests-hotspot tar",
        "failed tests-hotspot",
        "test-amd64",
    ),
    "/usr/share/doc/libstemmer0d/libstemmer_c_README.gz": (
        "libstemmer c README",
        "libstemmer c README",
        "libstemmer c README",
        "libstemmer0d",
    ),
    "/usr/share/doc/node/lldb_commands.py.gz": (
        "lldb commands.py",
        "lldb commands py",
        "lldb commands",
        "node",
    ),
    "/usr/share/gcc/python/libstdcxx/__init__.py": ("__init__", "init", "init", "libstdcxx"),
    "/usr/share/doc/python3-yaml/examples/yaml-highlight/yaml_hl.cfg": (
        "yaml hl",
        "yaml hl",
        "yaml hl",
        "yaml-highlight",
    ),
}


@pytest.mark.parametrize(("path", "read"), NAMES.items(), ids=list(NAMES))
def test_each_reader_of_a_file_name_keeps_its_reading(
    path: str, read: tuple[str, str, str, str]
) -> None:
    # the readers read the name alone: the case holds wherever the file is (the twelfth folder's
    # files went with its machine, and the cases were skipped there)
    title = spaced_name(PurePath(path).stem, title=True)
    assert (title, spaced_name(title), file_words(path), folder_words(path)) == read
