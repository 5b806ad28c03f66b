"""Files that hold other files: archives (.zip, .tar, .tgz, .tar.gz, .tar.bz2, .tar.xz), single
compressed files (.gz, .bz2, .xz) and e-mail (.eml, .mbox, .msg).

Each member of an archive or message is ingested as a document of its own, named
``container!member`` (``docs.zip!guide/intro.md``) and linked to its container's document
(``CONTAINED_IN``, or ``ATTACHED_TO`` for an e-mail attachment); a ``.gz`` (``.bz2``, ``.xz``)
of one file is that file. Members are read in memory, never written to disk, within
:class:`~.limits.ContainerLimits` (nesting depth, compression ratio, total size, member count).
:func:`.expand.parse_all` parses any input, a container or not, into its documents.
"""

#: Nothing to import from here directly: the public names are in :mod:`kgrag`.
__all__: list[str] = []
