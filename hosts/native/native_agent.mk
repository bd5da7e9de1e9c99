# libvmheap-native-agent.so: the agent for any program (hosts/native),
# preloaded by vmheap-run after the malloc tracker.  It holds its own copy
# of the agent, libvmheap and files/ (like the Ruby extension) and exports
# only vmheap_run_agent_yield (exports.map): a program that links
# libvmheap-agent.so keeps its own agent.  Like the tracker it is built
# without the sanitizers even in build/asan, where it is compiled from
# objects of its own (an instrumented library cannot be preloaded into
# the uninstrumented programs it serves).
NATIVE_AGENT_SO   := $(LIBDIR)/libvmheap-native-agent.so
LIBS_OUT          += $(NATIVE_AGENT_SO)
NATIVE_AGENT_SRCS := $(wildcard hosts/native/*.c)
ifeq ($(SAN),)
NATIVE_AGENT_OBJS := $(NATIVE_AGENT_SRCS:%.c=$(OBJDIR)/%.o) $(AGENT_OBJS) \
                     $(FORMAT_OBJS)
else
NATIVE_AGENT_OBJS := $(patsubst %.c,$(OBJDIR)/plain/%.o,$(NATIVE_AGENT_SRCS) \
                     $(AGENT_SRCS) $(FORMAT_SRCS) $(FILES_SRCS))
$(OBJDIR)/plain/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out $(SANITIZE),$(ALL_CFLAGS)) -MMD -MP -c $< -o $@
endif

$(NATIVE_AGENT_SO): $(NATIVE_AGENT_OBJS) hosts/native/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap-native-agent.so -Wl,--no-undefined \
	  -Wl,--version-script,hosts/native/exports.map $(LDFLAGS) -pthread \
	  -o $@ $(NATIVE_AGENT_OBJS) $(MSGPACK_LIBS) $(EVENT_LIBS) -ldl
