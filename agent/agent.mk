# libvmheap-agent: the embeddable agent (server thread, protocol, variable
# tree, discovery, dump driver) and its client API.
AGENT_SRCS  := $(wildcard agent/*.c)
AGENT_OBJS  := $(AGENT_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_AGENT_A  := $(LIBDIR)/libvmheap-agent.a
LIBVMHEAP_AGENT_SO := $(LIBDIR)/libvmheap-agent.so
LIBS_OUT    += $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_AGENT_SO)
PUBLIC_HEADERS += agent/vmheap_agent.h
# What a program that embeds the agent or uses its client links with.
AGENT_LINK  := $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)

$(LIBVMHEAP_AGENT_A): $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBVMHEAP_AGENT_SO): $(AGENT_OBJS) $(LIBVMHEAP_SO)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap-agent.so $(ALL_LDFLAGS) -o $@ \
	  $(AGENT_OBJS) -L$(LIBDIR) -lvmheap $(MSGPACK_LIBS) $(EVENT_LIBS)
