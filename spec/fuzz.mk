# Fuzzing (fuzz/): libFuzzer targets of the dump reader, vmheap-import's two
# converters (dump_all JSON, HPROF), the wire protocol
# (agent side, and the client API against any peer) and the discovery-file
# parser, the fork guard's cgroup reader, the malloc tracker's
# .eh_frame reader, the malloc trace reader (format/TRACE.md) and
# vmheap-replay's program builder, built with clang into $(BUILD)/fuzz/ (their
# own objects, compiled with -fsanitize=fuzzer-no-link,address,undefined;
# the gcc objects are not touched).  Seeds are written by fuzz-seeds (the
# project's own writer and frame encoder) at build time.
#
#   make fuzz FUZZ_SECONDS=N    replay spec/regress/, then fuzz each target
#                               for N seconds (default 60)
#   make check                  runs a short smoke of each (FUZZ_SMOKE_SECONDS),
#                               one suite per target
#
# In the sanitizer pass (SAN=1) the targets are not built and the smoke
# says it is skipped: the fuzzers carry ASan+UBSan themselves.
FUZZ_CC            ?= clang
FUZZ_SECONDS       ?= 60
FUZZ_SMOKE_SECONDS ?= 7
FUZZ_DIR   := $(BUILD)/fuzz
FUZZ_OBJ   := $(FUZZ_DIR)/obj
FUZZ_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -g -O1 \
               -fno-omit-frame-pointer -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
               -DVMHEAP_LIBFUZZER -Iformat -Ianalysis -Iagent -Iimport -Inative \
               -Ifiles -Ifuzz $(PKG_CFLAGS)
FUZZ_FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(FUZZ_OBJ)/%.o)
# the agent creates its files through libvmheap-files (files/)
FUZZ_AGENT_OBJS  := $(AGENT_SRCS:%.c=$(FUZZ_OBJ)/%.o) \
                    $(FILES_SRCS:%.c=$(FUZZ_OBJ)/%.o)
FUZZ_ANALYSIS_OBJS := $(ANALYSIS_SRCS:%.c=$(FUZZ_OBJ)/%.o)
FUZZ_IMPORT_OBJS := $(IMPORT_SRCS:%.c=$(FUZZ_OBJ)/%.o)
FUZZ_TARGETS := $(FUZZ_DIR)/fuzz_reader $(FUZZ_DIR)/fuzz_protocol \
                $(FUZZ_DIR)/fuzz_discovery $(FUZZ_DIR)/fuzz_client \
                $(FUZZ_DIR)/fuzz_import_json $(FUZZ_DIR)/fuzz_import_hprof \
                $(FUZZ_DIR)/fuzz_native $(FUZZ_DIR)/fuzz_histogram \
                $(FUZZ_DIR)/fuzz_native_sites \
                 $(FUZZ_DIR)/fuzz_cgroup $(FUZZ_DIR)/fuzz_cfa \
                 $(FUZZ_DIR)/fuzz_scan \
                 $(FUZZ_DIR)/fuzz_trace $(FUZZ_DIR)/fuzz_replay
FUZZ_SEEDS_BIN   := $(FUZZ_DIR)/fuzz-seeds
FUZZ_SEEDS_STAMP := $(FUZZ_DIR)/seeds/.stamp
# The smoke: one suite per target (fuzz-smoke-reader, ...), so that
# run-suites.sh spreads them over the cores like the other suites; in the
# sanitizer pass one suite, fuzz-smoke, that says it is skipped.
FUZZ_NAMES := $(FUZZ_TARGETS:$(FUZZ_DIR)/fuzz_%=%)
ifeq ($(SAN),)
FUZZ_SMOKE := $(FUZZ_NAMES:%=$(FUZZ_DIR)/fuzz-smoke-%)
EXTRA_ALL  += $(FUZZ_TARGETS) $(FUZZ_SEEDS_STAMP)
$(FUZZ_SMOKE): | $(FUZZ_TARGETS) $(FUZZ_SEEDS_STAMP)
else
FUZZ_SMOKE := $(FUZZ_DIR)/fuzz-smoke
endif
CHECK_SUITES += $(FUZZ_SMOKE)
EXTRA_ALL    += $(FUZZ_SMOKE)

.PHONY: fuzz
fuzz: $(FUZZ_TARGETS) $(FUZZ_SEEDS_STAMP)
	@sh fuzz/run.sh "$(abspath $(BUILD))" "$(CURDIR)" $(FUZZ_SECONDS)

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

FUZZ_LINK = $(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -pthread -o $@ $^ \
            $(MSGPACK_LIBS) $(EVENT_LIBS)

$(FUZZ_DIR)/fuzz_reader: $(FUZZ_OBJ)/fuzz/reader_fuzz.o $(FUZZ_ANALYSIS_OBJS) \
                         $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

$(FUZZ_DIR)/fuzz_protocol: $(FUZZ_OBJ)/fuzz/protocol_fuzz.o \
                           $(FUZZ_AGENT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

$(FUZZ_DIR)/fuzz_discovery: $(FUZZ_OBJ)/fuzz/discovery_fuzz.o \
                            $(FUZZ_AGENT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

# the fork guard's reader of /proc/self/cgroup, mountinfo, memory.*
$(FUZZ_DIR)/fuzz_cgroup: $(FUZZ_OBJ)/fuzz/cgroup_fuzz.o \
                         $(FUZZ_AGENT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

$(FUZZ_DIR)/fuzz_client: $(FUZZ_OBJ)/fuzz/client_fuzz.o \
                         $(FUZZ_AGENT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

# vmheap-import's converters; their seeds are fuzz/import-seeds/<target>/.
$(FUZZ_DIR)/fuzz_import_json: $(FUZZ_OBJ)/fuzz/import_json_fuzz.o \
                              $(FUZZ_OBJ)/fuzz/import_fuzz.o \
                              $(FUZZ_IMPORT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

$(FUZZ_DIR)/fuzz_import_hprof: $(FUZZ_OBJ)/fuzz/import_hprof_fuzz.o \
                               $(FUZZ_OBJ)/fuzz/import_fuzz.o \
                               $(FUZZ_IMPORT_OBJS) $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

$(FUZZ_DIR)/fuzz_native: $(FUZZ_OBJ)/fuzz/native_fuzz.o $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

# the malloc trace reader (format/trace_reader.c); its seed is TRACE.md's
# worked example (spec/trace_example.c, linked into fuzz-seeds)
$(FUZZ_DIR)/fuzz_trace: $(FUZZ_OBJ)/fuzz/trace_fuzz.o $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK)

# vmheap-replay's program builder and engine (replay/), on events
$(FUZZ_DIR)/fuzz_replay: $(FUZZ_OBJ)/fuzz/replay_fuzz.o \
                         $(FUZZ_OBJ)/replay/program.o $(FUZZ_OBJ)/replay/engine.o \
                         $(FUZZ_OBJ)/replay/program_map.o
	$(FUZZ_LINK)

# the malloc tracker's reader of .eh_frame (native/cfa.c, on its own)
$(FUZZ_DIR)/fuzz_cfa: $(FUZZ_OBJ)/fuzz/cfa_fuzz.o $(FUZZ_OBJ)/native/cfa.o
	$(FUZZ_LINK)

# the leak scan's readers of glibc's chunks and of a thread's syscall file
$(FUZZ_DIR)/fuzz_scan: $(FUZZ_OBJ)/fuzz/scan_fuzz.o $(FUZZ_OBJ)/native/chunks.o \
                       $(FUZZ_OBJ)/native/threads.o
	$(FUZZ_LINK)

# The console's reader and printer of a live histogram reply, with the
# report library it prints with.
FUZZ_REPORT_OBJS := $(REPORT_SRCS:%.c=$(FUZZ_OBJ)/%.o)
# report/pprof.c includes the protobuf-c code made at build time
FUZZ_REPORT_OBJS += $(FUZZ_OBJ)/gen/report/profile.pb-c.o
$(FUZZ_OBJ)/report/pprof.o: $(PPROF_PB_H)
$(FUZZ_OBJ)/report/pprof.o: FUZZ_CFLAGS += -I$(PPROF_GEN)
$(FUZZ_OBJ)/gen/report/profile.pb-c.o: $(PPROF_PB_C) $(PPROF_PB_H)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -I$(PPROF_GEN) -MMD -MP -c $< -o $@
$(FUZZ_OBJ)/fuzz/histogram_fuzz.o $(FUZZ_OBJ)/console/histogram.o: \
  FUZZ_CFLAGS += -Ireport -Iconsole
$(FUZZ_DIR)/fuzz_histogram: $(FUZZ_OBJ)/fuzz/histogram_fuzz.o \
                            $(FUZZ_OBJ)/console/histogram.o \
                            $(FUZZ_OBJ)/agent/frame.o $(FUZZ_OBJ)/agent/errors.o \
                            $(FUZZ_REPORT_OBJS) $(FUZZ_ANALYSIS_OBJS) \
                            $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK) $(REPORT_NATIVE_LIBS)

# The console's naming of the live native sites (libdw, through the
# report library's symbolizer) and its printers.
$(FUZZ_OBJ)/fuzz/native_sites_fuzz.o $(FUZZ_OBJ)/console/native_sites.o \
  $(FUZZ_OBJ)/console/render.o $(FUZZ_OBJ)/console/json.o: \
  FUZZ_CFLAGS += -Ireport -Iconsole
$(FUZZ_DIR)/fuzz_native_sites: $(FUZZ_OBJ)/fuzz/native_sites_fuzz.o \
                               $(FUZZ_OBJ)/console/native_sites.o \
                               $(FUZZ_OBJ)/console/render.o \
                               $(FUZZ_OBJ)/console/json.o \
                               $(FUZZ_OBJ)/console/histogram.o \
                               $(FUZZ_OBJ)/agent/frame.o $(FUZZ_OBJ)/agent/errors.o \
                               $(FUZZ_REPORT_OBJS) $(FUZZ_ANALYSIS_OBJS) \
                               $(FUZZ_FORMAT_OBJS)
	$(FUZZ_LINK) $(REPORT_NATIVE_LIBS) -lm

# The seed writer is an ordinary program of this build (gcc objects).
$(FUZZ_SEEDS_BIN): $(OBJDIR)/fuzz/seeds.o $(OBJDIR)/spec/trace_example.o \
                   $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(OBJDIR)/spec/trace_example.o \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) \
	  $(MSGPACK_LIBS) $(EVENT_LIBS)

$(FUZZ_SEEDS_STAMP): $(FUZZ_SEEDS_BIN) $(wildcard fuzz/import-seeds/*/*)
	rm -rf $(FUZZ_DIR)/seeds
	$(FUZZ_SEEDS_BIN) $(FUZZ_DIR)/seeds
	cp -R fuzz/import-seeds/. $(FUZZ_DIR)/seeds/
	touch $@

# The suite that `make check` runs: a smoke of every target, or a note
# that the sanitizer pass skips it.
FUZZ_SMOKE_SKIP = echo 'echo "fuzz: skipped in the sanitizer pass: the fuzz targets carry ASan+UBSan already (make fuzz)"'
FUZZ_SMOKE_RUN  = echo 'exec sh "$$VMHEAP_SRC/fuzz/run.sh" "$$VMHEAP_BUILD" "$$VMHEAP_SRC" $(FUZZ_SMOKE_SECONDS) $(patsubst fuzz-smoke-%,%,$(notdir $@))'

$(FUZZ_SMOKE): spec/fuzz.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; $(if $(SAN),$(FUZZ_SMOKE_SKIP),$(FUZZ_SMOKE_RUN)); } > $@
	@chmod +x $@

-include $(shell find $(FUZZ_OBJ) -name '*.d' 2>/dev/null)
