#!/usr/bin/python3
# archive-forms.py: what libarchive (the shared libarchive.so.13, through ctypes) gives for the
# link targets of small archives made the ways real ones are (PAX linkpath in UTF-8 and with
# hdrcharset=BINARY, GNU long links, raw ustar bytes, PAX hard links), in the C locale and in
# C.UTF-8: one line per link, "LOCALE: CASE ENTRY: type 0OCT, symlink|hardlink locale X, utf8 Y,
# wide Z" (None: libarchive gives NULL for that form). t-image-hostile.sh keeps the record.
# Exit status 77 (and why on stdout) when libarchive.so.13 cannot be loaded.
import ctypes
import io
import sys
import tarfile

try:
    la = ctypes.CDLL("libarchive.so.13")
    libc = ctypes.CDLL(None)
except OSError as e:
    print("libarchive.so.13 cannot be loaded: %s" % e)
    sys.exit(77)
P = ctypes.c_void_p
la.archive_read_new.restype = P
la.archive_read_support_format_all.argtypes = [P]
la.archive_read_open_memory.argtypes = [P, ctypes.c_char_p, ctypes.c_size_t]
la.archive_read_next_header.argtypes = [P, ctypes.POINTER(P)]
la.archive_read_free.argtypes = [P]
la.archive_error_string.argtypes = [P]
la.archive_error_string.restype = ctypes.c_char_p
la.archive_version_string.restype = ctypes.c_char_p
la.archive_entry_filetype.argtypes = [P]
la.archive_entry_filetype.restype = ctypes.c_int
for what in ("pathname", "symlink", "hardlink"):
    for suffix, rtype in (("", ctypes.c_char_p), ("_utf8", ctypes.c_char_p),
                          ("_w", ctypes.c_wchar_p)):
        fn = getattr(la, "archive_entry_" + what + suffix)
        fn.argtypes, fn.restype = [P], rtype
libc.setlocale.restype = ctypes.c_char_p
libc.setlocale.argtypes = [ctypes.c_int, ctypes.c_char_p]
LC_ALL = 6
ARCHIVE_EOF, ARCHIVE_WARN = 1, -20


def tar(fmt, entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, encoding="utf-8",
                      errors="surrogateescape") as t:
        for name, kind, link in entries:
            ti = tarfile.TarInfo(name)
            ti.type, ti.linkname = kind, link
            t.addfile(ti)
    return buf.getvalue()


RAW = b"raw-\xff".decode("utf-8", "surrogateescape")
CASES = [
    ("pax-utf8", tar(tarfile.PAX_FORMAT, [("ln-utf8", tarfile.SYMTYPE, "ziel-\u00e4-" + "x" * 100)])),
    ("pax-binary", tar(tarfile.PAX_FORMAT, [("ln-raw", tarfile.SYMTYPE, RAW)])),
    ("pax-long-ascii", tar(tarfile.PAX_FORMAT, [("ln-long", tarfile.SYMTYPE, "q" * 120)])),
    ("pax-hardlink", tar(tarfile.PAX_FORMAT, [("orig", tarfile.REGTYPE, ""),
                                              ("hard-" + "y" * 100, tarfile.LNKTYPE, "orig"),
                                              ("hard-long", tarfile.LNKTYPE, "o" * 120)])),
    ("gnu-longlink", tar(tarfile.GNU_FORMAT, [("ln-gnu", tarfile.SYMTYPE, RAW + "y" * 100)])),
    ("ustar-raw", tar(tarfile.USTAR_FORMAT, [("ln-ustar", tarfile.SYMTYPE, RAW),
                                             ("orig", tarfile.REGTYPE, ""),
                                             ("hard", tarfile.LNKTYPE, "orig")])),
]


def short(v):
    """v as repr, a long one cut: b'qqqq...'(120)."""
    if v is None or len(v) <= 24:
        return repr(v)
    return "%s...(%d)" % (repr(v[:16])[:-1], len(v))


def forms(locale, case, data):
    a = la.archive_read_new()
    la.archive_read_support_format_all(a)
    la.archive_read_open_memory(a, data, len(data))
    e = P()
    while True:
        r = la.archive_read_next_header(a, ctypes.byref(e))
        if r == ARCHIVE_EOF:
            break
        if r < ARCHIVE_WARN:
            print("%s: %s: error %s" % (locale, case, la.archive_error_string(a)))
            break
        name = short(la.archive_entry_pathname(e).decode("utf-8", "backslashreplace"))[1:]
        for what in ("symlink", "hardlink"):
            v = [getattr(la, "archive_entry_" + what + s)(e) for s in ("", "_utf8", "_w")]
            if any(x is not None for x in v):
                print("%s: %s %s: type 0%o, %s locale %s, utf8 %s, wide %s%s" % (
                    locale, case, name.rstrip("'"), la.archive_entry_filetype(e), what,
                    short(v[0]), short(v[1]), short(v[2]),
                    " (ARCHIVE_WARN)" if r == ARCHIVE_WARN else ""))
    la.archive_read_free(a)


print("libarchive: %s" % la.archive_version_string().decode())
for loc in ("C", "C.UTF-8"):
    if libc.setlocale(LC_ALL, loc.encode()) is None:
        print("%s: no such locale" % loc)
        continue
    for case, data in CASES:
        forms(loc, case, data)
