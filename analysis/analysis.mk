# libvmheap-analysis: what is computed from a dump (census, census diff,
# object identity, the hash and id tables, the heap graph with dominators,
# retained sizes and paths from the roots, leak suspects).  It uses libvmheap only.
#
# Shared library: libvmheap-analysis.so.$(ABI_VERSION), soname
# libvmheap-analysis.so.$(ABI_MAJOR), symlinks as for libvmheap (format.mk);
# it needs libvmheap.so.$(ABI_MAJOR) and exports only the VMHEAP_EXPORT
# functions of analysis/vmheap_analysis.h.
ANALYSIS_SRCS := $(wildcard analysis/*.c)
ANALYSIS_OBJS := $(ANALYSIS_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_ANALYSIS_A       := $(LIBDIR)/libvmheap-analysis.a
LIBVMHEAP_ANALYSIS_SO      := $(LIBDIR)/libvmheap-analysis.so
LIBVMHEAP_ANALYSIS_SO_REAL := $(LIBVMHEAP_ANALYSIS_SO).$(ABI_VERSION)
LIBVMHEAP_ANALYSIS_SONAME  := libvmheap-analysis.so.$(ABI_MAJOR)
LIBS_OUT += $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_ANALYSIS_SO_REAL) \
            $(LIBDIR)/$(LIBVMHEAP_ANALYSIS_SONAME) $(LIBVMHEAP_ANALYSIS_SO)
SHARED_LIBS += $(LIBVMHEAP_ANALYSIS_SO)
PUBLIC_HEADERS += analysis/vmheap_analysis.h analysis/vmheap_graph.h \
                  analysis/vmheap_graph_query.h analysis/vmheap_suspects.h

$(LIBVMHEAP_ANALYSIS_A): $(ANALYSIS_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Linked against libvmheap.so by path: the NEEDED entry is its soname.
$(LIBVMHEAP_ANALYSIS_SO_REAL): $(ANALYSIS_OBJS) $(LIBVMHEAP_SO) $(LIBDIR)/$(LIBVMHEAP_SONAME)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,$(LIBVMHEAP_ANALYSIS_SONAME) -Wl,--no-undefined \
	  $(ALL_LDFLAGS) -o $@ $(ANALYSIS_OBJS) $(LIBVMHEAP_SO) $(MSGPACK_LIBS)

$(LIBDIR)/$(LIBVMHEAP_ANALYSIS_SONAME) $(LIBVMHEAP_ANALYSIS_SO): $(LIBVMHEAP_ANALYSIS_SO_REAL)
	ln -sf $(notdir $<) $@

define ANALYSIS_INSTALL_LINES

sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VMHEAP_VERSION)|g' scripts/vmheap-analysis.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/vmheap-analysis.pc

endef
INSTALL_EXTRA += $(ANALYSIS_INSTALL_LINES)
