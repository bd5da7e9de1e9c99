# libvmheap-analysis: what is computed from a dump (census, census diff,
# object identity, the hash and id tables).  It uses libvmheap only.
ANALYSIS_SRCS := $(wildcard analysis/*.c)
ANALYSIS_OBJS := $(ANALYSIS_SRCS:%.c=$(OBJDIR)/%.o)
LIBVMHEAP_ANALYSIS_A    := $(LIBDIR)/libvmheap-analysis.a
LIBVMHEAP_ANALYSIS_SO   := $(LIBDIR)/libvmheap-analysis.so.1
LIBVMHEAP_ANALYSIS_LINK := $(LIBDIR)/libvmheap-analysis.so
LIBS_OUT += $(LIBVMHEAP_ANALYSIS_A) $(LIBVMHEAP_ANALYSIS_SO) \
            $(LIBVMHEAP_ANALYSIS_LINK)
PUBLIC_HEADERS += analysis/vmheap_analysis.h

# Only what vmheap_analysis.h marks VMHEAP_EXPORT leaves the library.
$(ANALYSIS_OBJS): ALL_CFLAGS += -fvisibility=hidden

$(LIBVMHEAP_ANALYSIS_A): $(ANALYSIS_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBVMHEAP_ANALYSIS_SO): $(ANALYSIS_OBJS) $(LIBVMHEAP_SO)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-soname,libvmheap-analysis.so.1 $(ALL_LDFLAGS) \
	  -o $@ $(ANALYSIS_OBJS) $(LIBVMHEAP_SO) $(MSGPACK_LIBS)

$(LIBVMHEAP_ANALYSIS_LINK): $(LIBVMHEAP_ANALYSIS_SO)
	ln -sf $(notdir $<) $@

define ANALYSIS_INSTALL_LINES

sed -e 's|@PREFIX@|$(PREFIX)|g' scripts/vmheap-analysis.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/vmheap-analysis.pc

endef
INSTALL_EXTRA += $(ANALYSIS_INSTALL_LINES)
