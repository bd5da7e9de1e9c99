# vmheap - one plain GNU Makefile.  Every output goes under $(BUILD).
#
#   make            build tools, libraries, the Ruby extension, the sample VM
#   make deps       install missing Debian packages (or print the command)
#   make check      deps + build + every test suite (then the sanitizer run)
#   make check-asan the suites under AddressSanitizer + UBSan (build/asan)
#   make demo       find a leak in a real Ruby VM, end to end
#   make bench      benchmarks against the peers (see bench/RESULTS.md)
#   make install PREFIX=/usr/local DESTDIR=
#   make format     apply .clang-format
#   make format-check  the C lines changed since .format-base match it
#   make format-changed  apply it to those lines only
#   make clean      remove $(BUILD)
#
# Modules add themselves through their own fragment (*/*.mk): each appends
# to BINS, LIBS_OUT, CHECK_SUITES and INSTALL_* below (a program built
# for the tests and docs, not installed, also to NOINST_BINS), and a shared
# library's fragment its .so (the dev name) to SHARED_LIBS and its public
# header to PUBLIC_HEADERS: spec/abi.mk checks that they agree.

BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
SAN      ?=
O        ?= -O2

PKGS      = msgpack libevent libevent_pthreads check
PKG_CFLAGS = $(shell pkg-config --cflags msgpack libevent 2>/dev/null)
MSGPACK_LIBS = $(shell pkg-config --libs msgpack 2>/dev/null)
EVENT_LIBS   = $(shell pkg-config --libs libevent libevent_pthreads 2>/dev/null)
CHECK_CFLAGS = $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   = $(shell pkg-config --libs check 2>/dev/null)
EDIT_CFLAGS  = $(shell pkg-config --cflags libedit 2>/dev/null)
EDIT_LIBS    = $(shell pkg-config --libs libedit 2>/dev/null)

WARN     = -Wall -Wextra -Werror
SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
SANFLAGS = $(if $(SAN),$(SANITIZE))
CFLAGS  ?= $(O) -g
# -fvisibility=hidden: the shared libraries export only what a public
# header marks VMHEAP_EXPORT (spec/abi.mk checks it).
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -fPIC -fvisibility=hidden \
             $(CFLAGS) $(SANFLAGS) -Iformat -Ianalysis -Ireport -Iagent -Iimport \
             -Inative -Ifiles \
             $(PKG_CFLAGS)
ALL_LDFLAGS = $(SANFLAGS) $(LDFLAGS) -pthread

# The libraries' ABI version: sonames libvmheap.so.$(ABI_MAJOR),
# libvmheap-analysis.so.$(ABI_MAJOR) and libvmheap-agent.so.$(ABI_MAJOR),
# real files *.so.$(ABI_VERSION).  Raise ABI_MAJOR when a public function
# goes or a signature or public struct changes (make check's abi_diff_test
# compares the libraries with abi/*.abi and fails until it is raised),
# then `make abi-baseline`.  2: struct vmheap_record's class member grew
# (object_id) after 1 (commit daf2b1e).  3: one error convention, opaque
# block cursors, native stacks named apart from allocation sites (issue
# 30; doc/api-migration.md); HACKING.md "The ABI".  4: the client's reply
# opaque, vmheap_agent.h free of msgpack-c's types (issue 30).
ABI_MAJOR   = 4
ABI_VERSION = $(ABI_MAJOR).0.0
# The release version, kept in one place: VMHEAP_VERSION in
# report/vmheap_tool.h (the tools' --version, through report/tool.c); the
# .pc files and the sample VM get it here.
VERSION_H := report/vmheap_tool.h
VMHEAP_VERSION := $(shell sed -n 's/^\#define VMHEAP_VERSION "\(.*\)"/\1/p' $(VERSION_H))

BINDIR = $(BUILD)/bin
LIBDIR = $(BUILD)/lib
OBJDIR = $(BUILD)/obj
SPECDIR = $(BUILD)/spec

BINS :=
NOINST_BINS :=
LIBS_OUT :=
SHARED_LIBS :=
CHECK_SUITES :=
BENCH_TARGETS :=
PUBLIC_HEADERS :=
EXTRA_ALL :=
MAN_PAGES :=

.PHONY: all deps check check-build check-run check-asan demo bench install clean format \
        format-check format-changed
all:

include format/format.mk
include files/files.mk
include analysis/analysis.mk
include report/report.mk
include agent/agent.mk
include native/native.mk
include run/run.mk
include replay/replay.mk
include histo/histo.mk
include diff/diff.mk
include path/path.mk
include dominators/dominators.mk
include html/html.mk
include console/console.mk
include hosts/sample/sample.mk
include hosts/ruby/ruby.mk
include hosts/native/native_agent.mk
include import/import.mk
# spec/lib.mk first: it defines the rule of a suite the others use
include spec/lib.mk
include $(filter-out spec/lib.mk,$(wildcard spec/*.mk))
include $(wildcard bench/*.mk)
include examples/examples.mk

# `make` builds what a user runs; the test suites and fuzz targets are built
# by check-run (and make fuzz), which depend on them.
TEST_OUTPUTS = $(SPECDIR)/% $(BUILD)/fuzz/%
all: $(LIBS_OUT) $(BINS) $(filter-out $(TEST_OUTPUTS),$(EXTRA_ALL))

# The flags stamp: every object depends on it, and it is rewritten only
# when the text of the compile and link flags changes (CFLAGS, O=, SAN=,
# LDFLAGS, CC, ...): a change rebuilds every object and what links them,
# and an unchanged text rebuilds nothing.  The target-specific additions
# (CHECK_CFLAGS, RUBY_CFLAGS, EDIT_CFLAGS) and the libraries from
# pkg-config and ruby are in it too.
FLAGS_STAMP := $(BUILD)/flags.stamp
FLAGS_TEXT = $(CC) | $(ALL_CFLAGS) | $(ALL_LDFLAGS) | $(CHECK_CFLAGS) \
             $(RUBY_CFLAGS) $(EDIT_CFLAGS) | $(MSGPACK_LIBS) $(EVENT_LIBS) \
             $(CHECK_LIBS) $(RUBY_LIBS) $(EDIT_LIBS)
.PHONY: FORCE
$(FLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@printf '%s\n' '$(subst ','\'',$(FLAGS_TEXT))' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

$(OBJDIR)/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

-include $(shell find $(OBJDIR) -name '*.d' 2>/dev/null)

deps:
	@sh scripts/deps.sh

# The test command.  Suites print Check's summary line each; any failure
# makes the whole run fail.  Then the same suites under ASan + UBSan.
# The sanitizers' build (build/asan) is made after the normal suites,
# not while they run: with it alongside, the compilers' load made
# safety_test's honest client lose 2 of its 10 tries against 3,238
# churning connections (the issue's bound is 9 of 10) in a fresh-clone
# check on 26 November 2026, 15:21 UTC.
# The ASan suites run after the normal ones, not alongside: tried on
# 26 November 2026 with four suites at once under a load of 15-20 from
# other jobs, two ASan tests ran out of their time (safety_test's
# a_stopped_dump_child_dies_with_its_vm, tools_test's
# every_truncation_point... at Check's 120 s).
# The builds run CHECK_JOBS at a time unless make was given -j itself (a
# plain `make check` used one core of the two); the suites run
# VMHEAP_CHECK_JOBS at a time (scripts/run-suites.sh).
CHECK_JOBS ?= 2
CHECK_J = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(CHECK_JOBS))
ASAN_VARS = BUILD=build/asan SAN=1 O=-O1
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(CHECK_J) check-build
	@$(MAKE) --no-print-directory check-run
	@$(MAKE) --no-print-directory $(CHECK_J) $(ASAN_VARS) check-build
	@$(MAKE) --no-print-directory $(ASAN_VARS) check-run

check-asan:
	@$(MAKE) --no-print-directory $(CHECK_J) $(ASAN_VARS) check-build
	@$(MAKE) --no-print-directory $(ASAN_VARS) check-run

# Benchmarks: each bench/*.mk fragment appends a target to BENCH_TARGETS.
bench:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(BENCH_TARGETS)

# The suites run the real programs (tools, sample VM, Ruby extension,
# libraries), so check-run needs what `make` builds as well as the suites:
# `make clean && make -j check-run` works on its own.
# check-build builds all that and runs nothing.
CHECK_PREREQS = $(LIBS_OUT) $(BINS) $(filter-out $(TEST_OUTPUTS),$(EXTRA_ALL)) \
                $(filter $(BUILD)/%,$(CHECK_SUITES))
check-build: $(CHECK_PREREQS)
check-run: $(CHECK_PREREQS)
	@sh scripts/run-suites.sh "$(abspath $(BUILD))" $(CHECK_SUITES)

# What `make install` puts in PREFIX/bin: the tools, not the programs
# built for the tests and docs (NOINST_BINS: the sample VM).
INSTALL_BINS = $(filter-out $(NOINST_BINS),$(BINS))

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include/vmheap $(DESTDIR)$(PREFIX)/lib/pkgconfig \
	  $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 0755 $(INSTALL_BINS) $(DESTDIR)$(PREFIX)/bin/
	cp -P $(LIBS_OUT) $(DESTDIR)$(PREFIX)/lib/
	install -m 0644 $(PUBLIC_HEADERS) $(DESTDIR)$(PREFIX)/include/vmheap/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VMHEAP_VERSION)|g' scripts/vmheap.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/vmheap.pc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VMHEAP_VERSION)|g' scripts/vmheap-agent.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/vmheap-agent.pc
	$(if $(MAN_PAGES),install -m 0644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/)
	$(INSTALL_EXTRA)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

# The lines of C changed since the commit in .format-base (HACKING.md
# "Formatting"); make check runs format-check as a suite (spec/build.mk).
format-check:
	@sh scripts/format-check.sh .
format-changed:
	@sh scripts/format-check.sh --fix .

# Only $(BUILD) (which holds build/asan when BUILD is build); refuse a
# BUILD that would take the sources with it.
clean:
	@case '$(BUILD)' in ''|.|./|..|../*|/) \
	  echo "make clean: refusing to remove BUILD='$(BUILD)'" >&2; exit 1;; esac
	rm -rf '$(BUILD)'
