# taotop: a terminal monitor for TAO training jobs on SLURM clusters.
#
#   make                 build ./taotop
#   make check           install deps, bring the test cluster up, run every test, bring it down
#   make check-layers    each room's includes against its README's list (and the check's self-test)
#   make check-names     every exported name of the library carries its module's prefix
#   make portable-check  build with -D_POSIX_C_SOURCE=200809L alone and run the unit tests (no cluster)
#   make check-slurm-24.11  the integration and screen tests against SLURM 24.11 (a Debian 13 root)
#   make repeat SUITE=test_ssh REPEAT=50  one integration suite N times in a row, both
#                        halves side by side as make check loads the machine (a flake's test)
#   make demo            install deps, bring the test cluster up, submit sample jobs, open taotop
#   make bench           run the benchmarks and print one table
#   make SANITIZE=1 ...  the same with AddressSanitizer + UndefinedBehaviorSanitizer
#   make fuzz            build the libFuzzer targets (clang) and run each FUZZ_SECONDS (60)
#                        or FUZZ_RUNS executions, whichever comes first
#   make valgrind        every CLI verb and the monitor once under valgrind (by hand)
#   make install         PREFIX=/usr/local DESTDIR= (binary, man page, templates, themes,
#                        bash and zsh completions: BASHCOMPDIR, ZSHCOMPDIR)
#   make dist            taotop-VERSION.tar.gz (reproducible) and its sha256
#   make formula         make dist, then the Homebrew formula's url and sha256 set to it
#   make deb             the Debian package (dpkg-buildpackage -us -uc -b; needs debhelper)

# The release: the VERSION file is its one place (make dist names the
# tarball after it, debian/changelog and the formula follow it).
VERSION   := $(shell cat VERSION 2>/dev/null)
ifeq ($(VERSION),)
$(error the VERSION file is missing or empty)
endif
# What `taotop --version` says: the release, plus the commit when built from
# a git checkout (this folder its top) whose HEAD is not the tag vVERSION.
# An unpacked tarball, or a machine without git, says the release alone.
GIT_TOP   := $(shell git -C '$(CURDIR)' rev-parse --show-toplevel 2>/dev/null)
ifeq ($(realpath $(GIT_TOP)),$(realpath $(CURDIR)))
GIT_TAGGED := $(shell git -C '$(CURDIR)' describe --tags --exact-match --match 'v$(VERSION)' HEAD 2>/dev/null)
GIT_COMMIT := $(if $(GIT_TAGGED),,$(shell git -C '$(CURDIR)' rev-parse --short=8 HEAD 2>/dev/null))
endif
FULL_VERSION := $(VERSION)$(if $(GIT_COMMIT), (g$(GIT_COMMIT)))
PREFIX    ?= /usr/local
MANPREFIX ?= $(PREFIX)/share/man
DATADIR   ?= $(PREFIX)/share/taotop
# Where bash-completion and zsh look for completions under PREFIX.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
PKG_CONFIG ?= pkg-config
CC        ?= cc

LIBS_PC    = ncursesw libssh libcjson yaml-0.1

CFLAGS    ?= -O2 -g
CFLAGS    += -std=c17 -D_POSIX_C_SOURCE=200809L -pthread
CFLAGS    += -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
             -Wmissing-prototypes -Wwrite-strings -Wundef -Wpointer-arith \
             -Wold-style-definition -Wnull-dereference -Wvla
CPPFLAGS  += -Isrc -DTAOTOP_DATADIR='"$(DATADIR)"'
PC_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(LIBS_PC) 2>/dev/null)
ifeq ($(PORTABLE),1)
# make portable-check: POSIX.1-2008 and nothing else. The libraries' own
# feature macros (Debian's ncursesw.pc adds -D_DEFAULT_SOURCE
# -D_XOPEN_SOURCE=600) would show glibc's extensions again, so they go too.
PC_CFLAGS := $(filter-out -D_%,$(PC_CFLAGS))
# compat.c's POSIX fallbacks instead of glibc's calls, so they are built
# and tested here too.
CPPFLAGS  += -DTAOTOP_COMPAT_POSIX=1
endif
CPPFLAGS  += $(PC_CFLAGS)
LDLIBS    += $(shell $(PKG_CONFIG) --libs $(LIBS_PC) 2>/dev/null) -pthread -lm

ifeq ($(FUZZ),1)
# libFuzzer's coverage on everything, ASan+UBSan as in the san build.
CC         = clang
BUILD      = build/fuzz
CFLAGS    += -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
else ifeq ($(SANITIZE),1)
BUILD      = build/san
CFLAGS    += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS   += -fsanitize=address,undefined
else ifeq ($(PORTABLE),1)
BUILD      = build/portable
else
BUILD      = build/rel
endif

# Everything but main.c goes into one static library the tests link too.
LIB_SRC    = $(sort $(wildcard src/*/*.c src/*/*/*.c))
LIB_OBJ    = $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB        = $(BUILD)/libtaotop.a
BIN        = $(BUILD)/taotop

UNIT_SRC   = $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN   = $(UNIT_SRC:tests/%.c=$(BUILD)/tests/%)
INTEG_SRC  = $(sort $(wildcard tests/integration/test_*.c))
INTEG_BIN  = $(INTEG_SRC:tests/%.c=$(BUILD)/tests/%)
INTEG_HELP = $(sort $(wildcard tests/integration/helper_*.c))
# In every Criterion test binary: the leak check runs in the test workers.
CRIT_HELP  = tests/criterion_lsan.c
# A test that leaks on purpose, for the runner's own test (an ASan build only).
# And one that runs a taotop printing a sanitizer's report (the rig helpers' check).
RUNNER_BIN = $(if $(filter 1,$(SANITIZE)),$(BUILD)/tests/runner/leaky $(BUILD)/tests/runner/cli_report)
BENCH_SRC  = $(sort $(wildcard tests/bench/bench_*.c))
BENCH_BIN  = $(BENCH_SRC:tests/%.c=$(BUILD)/tests/%)
FUZZ_SRC   = $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN   = $(FUZZ_SRC:tests/%.c=build/fuzz/tests/%)
FUZZ_SECONDS ?= 60
TEST_LIBS  = $(shell $(PKG_CONFIG) --libs criterion 2>/dev/null)
# Criterion's macros trip a few of our stricter warnings; tests only.
TEST_CFLAGS = -Wno-missing-prototypes -Itests
# The integration tests and benchmarks drive the Linux test cluster (tmux,
# /proc, the rig's daemons): they alone may use glibc's extensions.
RIG_CFLAGS  = -D_GNU_SOURCE

# V=1 shows every compiler command.
Q = $(if $(V),,@)

export TAOTOP_SHARE = $(abspath .)
export RIG_STATE   ?= /var/tmp/taotop-rig

.PHONY: all taotop dist formula deb deps check check-layers check-names check-slurm-24.11 repeat check-unit check-integration demo bench fuzz valgrind install uninstall clean lint-man check-libs
.DELETE_ON_ERROR:

all: taotop

taotop: $(BIN)
	ln -sf $(BIN) taotop

$(BIN): $(BUILD)/src/main.o $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Only main.c says the version; it is compiled again when the words change
# (a new commit), through a file holding them that is rewritten only then.
$(BUILD)/src/main.o: CPPFLAGS += -DTAOTOP_VERSION='"$(FULL_VERSION)"'
$(BUILD)/src/main.o: $(BUILD)/version
$(BUILD)/version: FORCE
	@mkdir -p $(@D)
	@echo '$(FULL_VERSION)' > $@.new; cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@
FORCE:

$(LIB): $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

# Before compiling anything: every library pkg-config can find, or the
# Debian package and the command that installs it, instead of a compiler
# error about a missing header.
check-libs:
	@command -v $(PKG_CONFIG) >/dev/null 2>&1 || { \
		echo "taotop: $(PKG_CONFIG) is missing: install it with 'make deps' (scripts/deps, as root) or 'apt-get install pkg-config'" >&2; exit 1; }
	@missing=""; for pc in $(LIBS_PC) $(if $(filter build-tests check% bench,$(MAKECMDGOALS)),criterion); do \
		$(PKG_CONFIG) --exists $$pc || case $$pc in \
			ncursesw) missing="$$missing libncurses-dev" ;; libssh) missing="$$missing libssh-dev" ;; \
			libcjson) missing="$$missing libcjson-dev" ;; yaml-0.1) missing="$$missing libyaml-dev" ;; \
			criterion) missing="$$missing libcriterion-dev" ;; *) missing="$$missing $$pc" ;; esac; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "taotop: libraries missing:$$missing" >&2; \
		echo "taotop: install them with 'make deps' (scripts/deps, as root), or 'apt-get install$$missing'" >&2; \
		exit 1; fi

$(BUILD)/%.o: %.c | check-libs
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/tests/unit/%: tests/unit/%.c $(CRIT_HELP) $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(CRIT_HELP) $(LIB) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/runner/cli_report: tests/runner/cli_report.c $(INTEG_HELP) $(CRIT_HELP) $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(RIG_CFLAGS) $(LDFLAGS) -o $@ $< $(INTEG_HELP) $(CRIT_HELP) $(LIB) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/runner/%: tests/runner/%.c $(CRIT_HELP) $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(LDFLAGS) -o $@ $< $(CRIT_HELP) $(LIB) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/integration/%: tests/integration/%.c $(INTEG_HELP) $(CRIT_HELP) $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(RIG_CFLAGS) $(LDFLAGS) -o $@ $< $(INTEG_HELP) $(CRIT_HELP) $(LIB) $(TEST_LIBS) $(LDLIBS)

$(BUILD)/tests/bench/%: tests/bench/%.c $(INTEG_HELP) $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TEST_CFLAGS) $(RIG_CFLAGS) $(LDFLAGS) -o $@ $< $(INTEG_HELP) $(LIB) $(TEST_LIBS) $(LDLIBS)

build/fuzz/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(LIB)
	@mkdir -p $(@D)
	@echo "CC $<"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -Wno-missing-prototypes $(LDFLAGS) -fsanitize=fuzzer \
		-o $@ $< $(LIB) $(LDLIBS)

deps:
	@scripts/deps

# Every test against both SLURM versions the kit brings up, each build once:
# the plain build against this machine's SLURM 22.05 (with the fuzzers'
# short runs), and the ASan+UBSan build (with the runner's own tests), made in a
# Debian 13 root (tests/cluster/root: debootstrap once, reused, kept outside
# the repository), against SLURM 24.11 and OpenSSH 10 there. So every unit,
# integration and screen test runs on both versions and under both builds.
# The root and its build are made on the second core while this machine's
# builds take the first; then the two halves run side by side on two rigs
# that share nothing but the machine (tests/check: the second rig has its
# own ports, state, munged and test user), each bringing its cluster up and
# down and ending with its own count line, and the last line adds them up.
# check-unit and check-integration run one part, in this build only.
RIG_STATE_2411 ?= /var/tmp/taotop-rig-24.11
BUILD_2411_SAN ?= build/slurm-24.11-san
export RIG_STATE_2411 BUILD_2411_SAN
check: deps lint-man check-layers
	@tests/check

# The integration and screen tests against SLURM 24.11 with the plain build
# (check runs the sanitizer build there), made and run in the root.
check-slurm-24.11: deps
	tests/cluster/root make
	tests/cluster/root run $(MAKE) --no-print-directory BUILD=build/slurm-24.11 build-tests
	RIG_SLURM=24.11 RIG_STATE=$(RIG_STATE_2411) tests/cluster/root run \
		env TAOTOP_BUILDS=build/slurm-24.11 tests/run integration

# One integration suite many times, both halves side by side as make check
# runs them (tests/repeat): make repeat SUITE=test_ssh REPEAT=50.
SUITE  ?= test_ssh
REPEAT ?= 50
repeat: deps
	@SUITE=$(SUITE) REPEAT=$(REPEAT) REPEAT_ALL=$(REPEAT_ALL) FILTER='$(FILTER)' tests/repeat

check-unit: deps
	$(MAKE) --no-print-directory build-tests
	TAOTOP_BUILDS="$(BUILD)" tests/run unit

check-integration: deps
	$(MAKE) --no-print-directory build-tests
	TAOTOP_BUILDS="$(BUILD)" tests/run integration

.PHONY: build-tests build-unit build-fuzz portable-check
build-tests: $(BIN) $(UNIT_BIN) $(INTEG_BIN) $(BENCH_BIN) $(RUNNER_BIN)
build-unit: $(BIN) $(UNIT_BIN)
build-fuzz: $(FUZZ_BIN)

# Each fuzz target FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/),
# with its dictionary; a crash fails it and leaves the input in
# build/fuzz/artifacts/.
fuzz:
	$(MAKE) --no-print-directory FUZZ=1 build-fuzz
	TAOTOP_BUILDS=build/fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_RUNS=$(FUZZ_RUNS) tests/run fuzz

demo: deps
	$(MAKE) --no-print-directory SANITIZE= taotop
	scripts/demo

bench: deps
	$(MAKE) --no-print-directory build-tests
	TAOTOP_BUILDS="$(BUILD)" tests/run bench

valgrind: deps
	$(MAKE) --no-print-directory SANITIZE= taotop
	tests/valgrind/run

# The code as a Mac or a BSD sees it: -D_POSIX_C_SOURCE=200809L as the only
# feature macro (no -D_GNU_SOURCE, the libraries' own -D_* dropped), and
# util/compat's POSIX fallbacks instead of glibc's calls; the binary and the
# unit tests built that way, and the unit tests run. No cluster needed.
portable-check:
	$(MAKE) --no-print-directory PORTABLE=1 build/portable/taotop build-unit
	TAOTOP_BUILDS=build/portable tests/run unit

lint-man:
	mandoc -Tlint -W warning man/taotop.1

# Each room's #include lines against what its README.md says it may include
# (scripts/check-layers), then the same check made to fail by one bad
# include in a copy of the tree.
check-layers:
	scripts/check-layers
	scripts/check-layers --self-test

# Every name the static library exports carries its module's prefix.
check-names: $(LIB)
	scripts/check-names $(LIB)

install: taotop
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANPREFIX)/man1 \
		$(DESTDIR)$(DATADIR)/templates $(DESTDIR)$(DATADIR)/themes
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/taotop
	install -m 644 man/taotop.1 $(DESTDIR)$(MANPREFIX)/man1/taotop.1
	install -m 644 templates/* $(DESTDIR)$(DATADIR)/templates/
	install -m 644 themes/*.yaml $(DESTDIR)$(DATADIR)/themes/
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 contrib/completion/taotop.bash $(DESTDIR)$(BASHCOMPDIR)/taotop
	install -m 644 contrib/completion/_taotop $(DESTDIR)$(ZSHCOMPDIR)/_taotop

# The release tarball (scripts/dist): taotop-VERSION.tar.gz in DIST_OUT
# (this folder unless told), reproducible, its sha256 printed.
DIST_OUT ?= .
dist:
	@scripts/dist '$(DIST_OUT)'

# The same, then contrib/homebrew/taotop.rb's url and sha256 set to it
# (docs/releasing.md: after tagging the release).
formula:
	@scripts/dist --formula '$(DIST_OUT)'

# The Debian package from this tree (debian/): ../taotop_VERSION-1_ARCH.deb.
# Needs dpkg-dev and debhelper; not part of make check.
deb:
	dpkg-buildpackage -us -uc -b

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/taotop $(DESTDIR)$(MANPREFIX)/man1/taotop.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/taotop $(DESTDIR)$(ZSHCOMPDIR)/_taotop
	rm -rf $(DESTDIR)$(DATADIR)

clean:
	rm -rf build taotop

-include $(LIB_OBJ:.o=.d) $(BUILD)/src/main.d
