# libvmheap-agent: the embeddable agent (server thread, protocol, variable
# tree, discovery, dump driver) and its client API.
#
# Shared library: libvmheap-agent.so.$(ABI_VERSION), soname
# libvmheap-agent.so.$(ABI_MAJOR), symlinks as for libvmheap (format.mk);
# it needs libvmheap.so.$(ABI_MAJOR) and exports only the VMHEAP_EXPORT
# functions of agent/vmheap_agent.h.
AGENT_SRCS  := $(wildcard agent/*.c)
# with libvmheap-files' objects (files/), which the agent creates its
# files through
AGENT_OBJS  := $(AGENT_SRCS:%.c=$(OBJDIR)/%.o) $(FILES_OBJS)
LIBVMHEAP_AGENT_A  := $(LIBDIR)/libvmheap-agent.a
LIBVMHEAP_AGENT_SO := $(LIBDIR)/libvmheap-agent.so
LIBVMHEAP_AGENT_SO_REAL := $(LIBVMHEAP_AGENT_SO).$(ABI_VERSION)
LIBVMHEAP_AGENT_SONAME  := libvmheap-agent.so.$(ABI_MAJOR)
LIBS_OUT    += $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_AGENT_SO_REAL) \
               $(LIBDIR)/$(LIBVMHEAP_AGENT_SONAME) $(LIBVMHEAP_AGENT_SO)
SHARED_LIBS += $(LIBVMHEAP_AGENT_SO)
PUBLIC_HEADERS += agent/vmheap_agent.h
# What a program that embeds the agent or uses its client links with.
AGENT_LINK  := $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS)

$(LIBVMHEAP_AGENT_A): $(AGENT_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Linked against libvmheap.so by path (not -lvmheap, which could pick the
# .a): the NEEDED entry is its soname.
$(LIBVMHEAP_AGENT_SO_REAL): $(AGENT_OBJS) $(LIBVMHEAP_SO) $(LIBDIR)/$(LIBVMHEAP_SONAME)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(LIBVMHEAP_AGENT_SONAME) -Wl,--no-undefined \
	  $(ALL_LDFLAGS) -o $@ $(AGENT_OBJS) $(LIBVMHEAP_SO) $(MSGPACK_LIBS) \
	  $(EVENT_LIBS)

$(LIBDIR)/$(LIBVMHEAP_AGENT_SONAME) $(LIBVMHEAP_AGENT_SO): $(LIBVMHEAP_AGENT_SO_REAL)
	ln -sf $(notdir $<) $@
