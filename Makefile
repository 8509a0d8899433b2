# rootlessrt: a rootless, user-namespace-first OCI runtime.
# `make demo` and `make check` install what is missing (contrib/install-deps.sh).

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
# The AppArmor profile goes to /etc/apparmor.d when the parser takes it (AppArmor 4.0, which has
# userns rules); APPARMOR=1 installs it anyway (packages for such systems), APPARMOR=0 never.
APPARMOR ?= auto
APPARMOR_DIR ?= /etc/apparmor.d
DESTDIR ?=
BUILD ?= build
VERSION := 0.1.0
COMMIT := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)

CC ?= cc
PKGS := libseccomp libcap json-c slirp libarchive nettle
LINKED_PKGS := libseccomp libcap json-c
# Lazy: pkg-config runs when a compile needs it, after install-deps.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
# rootlessrt is linked statically (static-pie: glibc, libseccomp, libcap and json-c from their
# Debian archives) where they all exist: no dynamic loader on each run, and a smaller process to
# fork; `make bench` measures the difference. LINK_STATIC=0 (and check-asan) link the shared
# objects. libslirp, with GLib, belongs to the network helper alone: rootlessrt-net, a separate
# dynamically linked program, started by rootlessrt for --network slirp.
LINK_STATIC ?= 1
static_or_shared = $(if $(and $(filter 1,$(LINK_STATIC)),$(wildcard $(shell pkg-config \
                   --variable=libdir $(1))/lib$(2).a)),-l:lib$(2).a,-l$(2))
PKG_LIBS = $(call static_or_shared,libseccomp,seccomp) $(call static_or_shared,libcap,cap) \
           $(call static_or_shared,json-c,json-c) \
           $(filter-out -lseccomp -lcap -ljson-c,$(shell pkg-config --static --libs-only-l \
           $(LINKED_PKGS))) $(IMAGE_LIBS)
# Images (image/): libarchive reads tars, gzip and zstd; nettle computes sha256. Statically only
# what the tar reader and those two filters pull in (libarchive's other dependencies, libacl and
# libxml2, have no archive here and are not needed for reading tars).
IMAGE_LIBS = $(if $(filter -l:%,$(call static_or_shared,libarchive,archive)),\
             -l:libarchive.a $(call static_or_shared,nettle,nettle) \
             $(call static_or_shared,libzstd,zstd) $(call static_or_shared,zlib,z),\
             $(shell pkg-config --libs libarchive nettle))
SLIRP_LIBS = $(shell pkg-config --libs slirp)
# -static-pie when every archive is there (glibc's libc.a included).
static_all = $(and $(filter 1,$(LINK_STATIC)),$(wildcard $(shell $(CC) -print-file-name=libc.a)),\
             $(filter -l:%,$(call static_or_shared,libseccomp,seccomp)),\
             $(filter -l:%,$(call static_or_shared,libcap,cap)),\
             $(filter -l:%,$(call static_or_shared,json-c,json-c)),\
             $(filter -l:%,$(call static_or_shared,libarchive,archive)))
RRT_LINK = $(if $(static_all),-static-pie)

WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
        -Wmissing-prototypes -Wvla -Wpointer-arith
CFLAGS ?= -O2 -g
SAN_FLAGS ?=
ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -fvisibility=hidden -fno-strict-aliasing -Iinclude \
             $(WARN) $(CFLAGS) $(SAN_FLAGS) $(PKG_CFLAGS) \
             -DRRT_VERSION='"$(VERSION)"' -DRRT_COMMIT='"$(COMMIT)"' \
             -DRRT_LIBEXECDIR='"$(LIBEXECDIR)/rootlessrt"'
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

# The source tree, top to bottom (docs/architecture.md): cli/ (main and one file per verb) over
# the library: container/ (the lifecycle), image/ and check/ (the desktop run and the doctor),
# rootfs/, confine/, cgroup/, net/, spec/, userns/, and base/ at the bottom. `make lint` checks
# that no file depends on another in a circle (contrib/depcheck.py).
LIB_DIRS := base spec userns cgroup confine rootfs net container image check
LIB_SRCS := $(foreach d,$(LIB_DIRS),$(wildcard $(d)/*.c))
LIB_SRCS := $(filter-out net/helper_main.c,$(LIB_SRCS))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
CLI_SRCS := $(wildcard cli/*.c)
CLI_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRCS))
NET_MAIN_OBJ := $(BUILD)/obj/net/helper_main.o
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
PROBE := $(BUILD)/rrt-probe
CONSOLE_RECV := $(BUILD)/console-recv
PTYRUN := $(BUILD)/ptyrun
ARCHIVE_NULL := $(BUILD)/rootlessrt-archive-null

.PHONY: all deps demo check check-asan unit integration bench lint format install clean fuzz podman-check \
        fuzz-build fuzz-replay \
        man dist deb deb-test rpm check-runc

all: $(BUILD)/rootlessrt $(BUILD)/rootlessrt-net $(BUILD)/rootlessrt-systemd $(BUILD)/rootlessrt-pull

deps:
	@sh contrib/install-deps.sh

$(BUILD)/obj/%.o: %.c $(wildcard include/rootlessrt/*.h) $(wildcard */*.h)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/librrt.a: $(LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(BUILD)/rootlessrt: $(CLI_OBJS) $(BUILD)/librrt.a
	$(CC) $(ALL_LDFLAGS) $(RRT_LINK) -o $@ $^ $(PKG_LIBS)

$(BUILD)/rootlessrt-net: $(NET_MAIN_OBJ) $(BUILD)/librrt.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS) $(SLIRP_LIBS)

# The systemd cgroup driver's D-Bus client: libsystemd's sd-bus, dynamically linked (Debian
# ships no libsystemd.a); rootlessrt execs it only for --systemd-cgroup.
$(BUILD)/rootlessrt-systemd: systemd/helper_main.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags libsystemd) $(ALL_LDFLAGS) -o $@ $< \
	  $(shell pkg-config --libs libsystemd)

# The registry client (docker://, `pull`): libcurl, dynamically linked (Debian ships no static
# libcurl with its TLS and other dependencies); rootlessrt execs it only to pull.
# Its objects are in $(BUILD)/obj/pull/ beside the library's (depcheck reads them all);
# PULL_LIB_OBJS: the library's objects it links as they are, base/'s allocation and escaping
# (escape.h: one escaping for the runtime and it).
PULL_PKGS := libcurl json-c nettle
PULL_SRCS := $(wildcard pull/*.c)
PULL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(PULL_SRCS))
PULL_CLIENT_OBJS := $(filter-out $(BUILD)/obj/pull/helper_main.o,$(PULL_OBJS))
PULL_LIB_OBJS := $(BUILD)/obj/base/alloc.o $(BUILD)/obj/base/escape.o
$(PULL_OBJS): ALL_CFLAGS += $(shell pkg-config --cflags $(PULL_PKGS))
$(BUILD)/rootlessrt-pull: $(PULL_OBJS) $(PULL_LIB_OBJS)
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(shell pkg-config --libs $(PULL_PKGS))

# The registry client's parsers: its objects (libcurl's, json-c's and nettle's), not librrt's.
$(BUILD)/tests/test_pull: tests/unit/test_pull.c $(wildcard tests/unit/*.h pull/*.h) \
                          $(PULL_CLIENT_OBJS) $(PULL_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(PULL_CLIENT_OBJS) $(PULL_LIB_OBJS) \
	  $(shell pkg-config --libs $(PULL_PKGS))

$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/librrt.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Itests/unit $(ALL_LDFLAGS) -o $@ $< $(BUILD)/librrt.a $(PKG_LIBS) \
	  $(SLIRP_LIBS)

# The in-container test helper: static, no sanitizers, no libraries.
$(PROBE): tests/helper/rrt-probe.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -static -o $@ $<

# A --console-socket receiver for the terminal tests.
$(CONSOLE_RECV): tests/helper/console-recv.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

# Runs a command on a pty of its own that never sees input (the engine suites' -t checks).
$(PTYRUN): tests/helper/ptyrun.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

# rootlessrt whose unpacker sees libarchive give NULL link targets on demand (t-image-hostile):
# unpack.o's libarchive calls renamed to the interposer's, tests/helper/rootlessrt-archive-null.c.
# The binary is static-pie with libarchive.a inside, so no LD_PRELOAD could reach them.
NULLED_CALLS := symlink symlink_utf8 symlink_w hardlink hardlink_utf8 hardlink_w filetype
$(BUILD)/tests/unpack-archive-null.o: $(BUILD)/obj/image/unpack.o
	@mkdir -p $(dir $@)
	objcopy $(foreach f,$(NULLED_CALLS),--redefine-sym archive_entry_$(f)=rrt_null_archive_entry_$(f)) \
	  $< $@
$(ARCHIVE_NULL): tests/helper/rootlessrt-archive-null.c $(BUILD)/tests/unpack-archive-null.o \
                 $(CLI_OBJS) $(BUILD)/librrt.a
	$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(RRT_LINK) -o $@ $(CLI_OBJS) \
	  $(BUILD)/tests/unpack-archive-null.o $< $(BUILD)/librrt.a $(PKG_LIBS)

unit: $(UNIT_BINS)
	@sh tests/run-unit.sh $(UNIT_BINS)

integration: all $(PROBE) $(CONSOLE_RECV) $(ARCHIVE_NULL)
	@bash tests/run-integration.sh $(abspath $(BUILD)/rootlessrt) $(abspath $(PROBE))

# One summary line for everything: unit + integration.
check: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS) $(PROBE) $(CONSOLE_RECV) $(PTYRUN) $(ARCHIVE_NULL) \
	  fuzz-replay
	@if sh tests/fuzz/have-libfuzzer.sh >/dev/null; then $(MAKE) --no-print-directory fuzz-build; fi
	@bash tests/run-all.sh $(BUILD)

check-asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan CFLAGS="-O1 -g -fno-omit-frame-pointer" \
	  SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" LINK_STATIC=0 \
	  build-asan/rootlessrt build-asan/rootlessrt-net build-asan/rootlessrt-systemd build-asan/rootlessrt-pull $(patsubst $(BUILD)/%,build-asan/%,$(UNIT_BINS)) build-asan/rrt-probe \
	  build-asan/console-recv build-asan/rootlessrt-archive-null \
	  $(patsubst %,build-asan/fuzz/%,$(FUZZ_NAMES))
	@RRT_ASAN=1 bash tests/run-all.sh build-asan

demo: deps
	@$(MAKE) --no-print-directory all
	@bash contrib/demo.sh $(abspath $(BUILD)/rootlessrt)

bench: deps
	@$(MAKE) --no-print-directory all $(PROBE) $(BUILD)/rrt-netbench
	@bash contrib/bench.sh $(abspath $(BUILD)/rootlessrt)
	@bash contrib/bench-shim.sh $(abspath $(BUILD)/rootlessrt)

# The rates tool of tests/netbench/bench-net.sh (found beside the runtime).
$(BUILD)/rrt-netbench: tests/netbench/rrt-netbench.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o $@ $<

# Fuzzing. Every tests/fuzz/fuzz_NAME.c is a libFuzzer harness (LLVMFuzzerTestOneInput) whose
# seeds are tests/fuzz/corpus/NAME/. Each is built twice: by clang with libFuzzer, ASan and UBSan
# into build-fuzz/fuzz_NAME (`make fuzz`, and `make check` where clang and its libFuzzer runtime
# are installed), and by $(CC) with tests/fuzz/replay.c as its main into $(BUILD)/fuzz/fuzz_NAME,
# which runs every file of its corpus once (make check, so gcc builds every harness and each
# regression input runs everywhere). tests/fuzz/smoke.sh runs both. A harness named
# fuzz_pull_NAME.c is linked as rootlessrt-pull is (pull/'s sources, PULL_LIB_OBJS, libcurl), its
# main() renamed.
FUZZ_BUILD := build-fuzz
FUZZ_NAMES = $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_REPLAY_BINS = $(patsubst %,$(BUILD)/fuzz/%,$(FUZZ_NAMES))
FUZZ_HEADERS = $(wildcard tests/fuzz/*.h)
# pull/'s main() renamed, so a harness can call any of its functions whichever file they are in.
PULL_FUZZ_FLAGS := -Dmain=rrt_pull_helper_main -Wno-missing-prototypes
# The seconds per harness of `make fuzz` (FUZZ_SECONDS=30 for a quick pass); FUZZ_ONLY="NAME..."
# fuzzes only those.
FUZZ_SECONDS ?= 300
FUZZ_ONLY ?=

# The sub-make of `fuzz-build` has BUILD=build-fuzz, CC=clang and the sanitizers in SAN_FLAGS.
$(BUILD)/fuzz_pull_%: tests/fuzz/fuzz_pull_%.c $(FUZZ_HEADERS) $(wildcard pull/*.c pull/*.h) \
                      $(PULL_LIB_OBJS)
	@echo "  FUZZ    $@"
	@$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags $(PULL_PKGS)) $(PULL_FUZZ_FLAGS) -fsanitize=fuzzer \
	  -o $@ $< $(wildcard pull/*.c) $(PULL_LIB_OBJS) $(shell pkg-config --libs $(PULL_PKGS))
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_HEADERS) $(BUILD)/librrt.a
	@echo "  FUZZ    $@"
	@$(CC) $(ALL_CFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/librrt.a $(PKG_LIBS) $(SLIRP_LIBS)

# The same harnesses with the replay main, built by the normal compiler.
$(BUILD)/fuzz/replay.o: tests/fuzz/replay.c
	@mkdir -p $(dir $@)
	@$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(BUILD)/fuzz/fuzz_pull_%: tests/fuzz/fuzz_pull_%.c $(BUILD)/fuzz/replay.o $(FUZZ_HEADERS) \
                           $(wildcard pull/*.c pull/*.h) $(PULL_LIB_OBJS)
	@echo "  REPLAY  $@"
	@$(CC) $(ALL_CFLAGS) $(shell pkg-config --cflags $(PULL_PKGS)) $(PULL_FUZZ_FLAGS) $(ALL_LDFLAGS) \
	  -o $@ $< $(BUILD)/fuzz/replay.o $(wildcard pull/*.c) $(PULL_LIB_OBJS) \
	  $(shell pkg-config --libs $(PULL_PKGS))
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(BUILD)/fuzz/replay.o $(FUZZ_HEADERS) $(BUILD)/librrt.a
	@echo "  REPLAY  $@"
	@$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/fuzz/replay.o $(BUILD)/librrt.a \
	  $(PKG_LIBS) $(SLIRP_LIBS)

fuzz-replay: $(FUZZ_REPLAY_BINS)

fuzz-build:
	@$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=clang CFLAGS="-O1 -g" LINK_STATIC=0 \
	  SAN_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" \
	  $(patsubst %,$(FUZZ_BUILD)/%,$(FUZZ_NAMES))

# Minutes per harness (FUZZ_SECONDS); new inputs go to build-fuzz/corpus/NAME, crashes to
# build-fuzz/crash/NAME/ (each fix adds the input to tests/fuzz/corpus/NAME/).
fuzz:
	@sh contrib/install-deps.sh fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@bash tests/fuzz/smoke.sh --long $(FUZZ_SECONDS) $(FUZZ_BUILD) $(BUILD) $(FUZZ_ONLY)

# runc's own bats suite (Debian's runc source package) against rootlessrt, runc and crun, root and
# rootless, with a side-by-side table: long (6 to 10 minutes here), so not part of `make check`.
# RUNC_BATS_ARGS passes flags on (--mode root, --tests 'exec.bats', --cache DIR, --no-debian).
check-runc: all $(PTYRUN)
	@RRT_BIN=$(abspath $(BUILD)/rootlessrt) PTYRUN=$(abspath $(PTYRUN)) \
	  bash contrib/runc-bats.sh $(RUNC_BATS_ARGS)

podman-check: all
	@bash tests/podman-check.sh $(abspath $(BUILD)/rootlessrt)

SHELL_SCRIPTS = $(shell git ls-files '*.sh' .ci/run contrib/hooks 2>/dev/null)
C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	clang-format -i $(C_FILES)

# The dependency rules (no circle between files, folders only use the layers below them) are
# checked on the objects themselves: contrib/depcheck.py.
lint: $(LIB_OBJS) $(CLI_OBJS) $(NET_MAIN_OBJ) $(PULL_OBJS)
	@python3 contrib/depcheck.py $(BUILD)/obj
	@clang-format --dry-run --Werror $(C_FILES)
	@cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
	  --suppress=missingIncludeSystem -Iinclude $(C_FILES)
	@shellcheck -x -S warning $(SHELL_SCRIPTS)
	@echo "lint: ok"

# The man page: man/rootlessrt.1.in with each verb's `rootlessrt help VERB` text put in.
man: $(BUILD)/rootlessrt.1
$(BUILD)/rootlessrt.1: man/rootlessrt.1.in man/mkman.sh $(BUILD)/rootlessrt
	sh man/mkman.sh $(BUILD)/rootlessrt $< >$@.tmp && mv $@.tmp $@

install: all $(BUILD)/rootlessrt.1
	install -D -m 0755 $(BUILD)/rootlessrt $(DESTDIR)$(BINDIR)/rootlessrt
	install -D -m 0755 $(BUILD)/rootlessrt-net $(DESTDIR)$(LIBEXECDIR)/rootlessrt/rootlessrt-net
	install -D -m 0755 $(BUILD)/rootlessrt-systemd \
	  $(DESTDIR)$(LIBEXECDIR)/rootlessrt/rootlessrt-systemd
	install -D -m 0755 $(BUILD)/rootlessrt-pull $(DESTDIR)$(LIBEXECDIR)/rootlessrt/rootlessrt-pull
	install -d $(DESTDIR)$(DATADIR)/rootlessrt/hooks
	install -m 0755 contrib/hooks/*.sh $(DESTDIR)$(DATADIR)/rootlessrt/hooks/
	install -D -m 0644 $(BUILD)/rootlessrt.1 $(DESTDIR)$(MANDIR)/man1/rootlessrt.1
	install -D -m 0644 contrib/completion/rootlessrt.bash \
	  $(DESTDIR)$(DATADIR)/bash-completion/completions/rootlessrt
	install -D -m 0644 contrib/completion/_rootlessrt $(DESTDIR)$(DATADIR)/zsh/site-functions/_rootlessrt
	install -D -m 0644 contrib/completion/rootlessrt.fish \
	  $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/rootlessrt.fish
	install -d $(DESTDIR)$(DATADIR)/rootlessrt/apparmor
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@LIBEXECDIR@|$(LIBEXECDIR)|g' \
	  contrib/apparmor/rootlessrt.in >$(DESTDIR)$(DATADIR)/rootlessrt/apparmor/rootlessrt
	@sh contrib/apparmor/install.sh "$(APPARMOR)" $(DESTDIR)$(DATADIR)/rootlessrt/apparmor/rootlessrt \
	  "$(DESTDIR)$(APPARMOR_DIR)"

# A source tarball of the tracked files as they are in the tree: build/rootlessrt-VERSION.tar.gz.
dist:
	@sh contrib/packaging/dist.sh $(VERSION) $(BUILD)

# The RPM spec built with rpmbuild from the dist tarball (--nodeps: on Debian the BuildRequires
# are Debian packages), into build/rpm/: a check that the spec builds and packages every file.
rpm: dist
	@sh contrib/packaging/build-rpm.sh $(VERSION) $(BUILD)

# A Debian package built from the tree (dpkg-buildpackage, debian/), into build/deb/.
deb:
	@sh contrib/packaging/build-deb.sh $(BUILD)/deb

# The Debian package installed into a clean Debian 12 root (debootstrap, as root), where
# `rootlessrt check` then runs as an unprivileged user.
deb-test: deb all
	@bash contrib/packaging/test-deb.sh $(BUILD)/deb $(BUILD)/rootlessrt

clean:
	rm -rf build build-asan build-fuzz
