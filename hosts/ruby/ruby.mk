# hosts/ruby: the MRI extension build/ruby/vmheap_agent.so
#
#   ruby -I build/ruby -rvmheap_agent app.rb
#
# Ruby's headers come from the `ruby` on PATH (RbConfig), included with
# -isystem: they are C11-clean but warn under -Wextra (unused parameters in
# their inline functions), and -Werror must not fail on someone else's
# headers.  The objects otherwise use the common flags (-std=c11, -fPIC).
# The extension links libvmheap-agent and libvmheap statically (their
# objects are -fPIC) so that it needs nothing of ours at run time, and
# exports only Init_vmheap_agent: its own objects are -fvisibility=hidden
# (Init_ is marked RUBY_FUNC_EXPORTED) and --exclude-libs,ALL keeps the
# archives' VMHEAP_EXPORT functions out of its dynamic symbol table.
#
# `make install` puts vmheap_agent.so into Ruby's site arch directory
# re-rooted at $(PREFIX): with PREFIX=/usr/local (the default) that is
# RbConfig's sitearchdir itself (/usr/local/lib/<arch>/site_ruby on
# Debian), which is on ruby's load path, so `ruby -rvmheap_agent app.rb`
# works with no -I.  For another PREFIX add that directory to RUBYLIB, or
# set RUBY_ARCHDIR.

RUBY ?= ruby
RUBY_CFLAGS := $(shell $(RUBY) -rrbconfig -e 'c = RbConfig::CONFIG; print "-isystem ", c["rubyarchhdrdir"], " -isystem ", c["rubyhdrdir"]' 2>/dev/null)
RUBY_LIBS := $(shell $(RUBY) -rrbconfig -e 'c = RbConfig::CONFIG; print "-L", c["libdir"], " ", c["LIBRUBYARG_SHARED"]' 2>/dev/null)
RUBY_ARCHDIR ?= $(PREFIX)/lib/$(shell $(RUBY) -rrbconfig -e 'print RbConfig::CONFIG["sitearchdir"].sub(%r{\A.*?/lib/}, "")' 2>/dev/null)

RUBY_HOST_SRCS := $(wildcard hosts/ruby/*.c)
RUBY_HOST_OBJS := $(RUBY_HOST_SRCS:%.c=$(OBJDIR)/%.o)
RUBY_HOST_SO := $(BUILD)/ruby/vmheap_agent.so

$(RUBY_HOST_OBJS): private ALL_CFLAGS += $(RUBY_CFLAGS)

# The extension needs libvmheap-agent; until agent/agent.mk defines it the
# extension is not part of `make`.
ifneq ($(LIBVMHEAP_AGENT_A),)
EXTRA_ALL += $(RUBY_HOST_SO)

$(RUBY_HOST_SO): $(RUBY_HOST_OBJS) $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,--exclude-libs,ALL $(ALL_LDFLAGS) -o $@ $(RUBY_HOST_OBJS) \
	  $(LIBVMHEAP_AGENT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(EVENT_LIBS) \
	  $(RUBY_LIBS)

define RUBY_INSTALL_LINES

install -d $(DESTDIR)$(RUBY_ARCHDIR)
install -m 0755 $(RUBY_HOST_SO) $(DESTDIR)$(RUBY_ARCHDIR)/vmheap_agent.so

endef
INSTALL_EXTRA += $(RUBY_INSTALL_LINES)
endif

# build/ruby/vmheap_attach.so: what `vmheap-console --attach` loads into a
# running Ruby (hosts/ruby/attach/ruby_attach.c).  It links nothing of
# Ruby's (it finds Ruby's functions with dlsym), so that loaded anywhere
# else it does nothing; Ruby's headers give it the types only.
RUBY_ATTACH_SRC := hosts/ruby/attach/ruby_attach.c
RUBY_ATTACH_OBJ := $(OBJDIR)/hosts/ruby/attach/ruby_attach.o
RUBY_ATTACH_SO := $(BUILD)/ruby/vmheap_attach.so
$(RUBY_ATTACH_OBJ): private ALL_CFLAGS += $(RUBY_CFLAGS)
ifneq ($(LIBVMHEAP_AGENT_A),)
EXTRA_ALL += $(RUBY_ATTACH_SO)
$(RUBY_ATTACH_SO): $(RUBY_ATTACH_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(ALL_LDFLAGS) -o $@ $(RUBY_ATTACH_OBJ) -ldl

define RUBY_ATTACH_INSTALL_LINES

install -m 0755 $(RUBY_ATTACH_SO) $(DESTDIR)$(RUBY_ARCHDIR)/vmheap_attach.so

endef
INSTALL_EXTRA += $(RUBY_ATTACH_INSTALL_LINES)
endif

# vmheap-console --attach finds vmheap_attach.so from its own binary:
# ../ruby/ in a build tree, ../lib/<arch>/site_ruby/ once installed (the
# arch directory relative to PREFIX, so that `make install PREFIX=...`
# needs no rebuild), else at RUBY_ARCHDIR as it was at build time.
$(OBJDIR)/console/attach.o: private ALL_CFLAGS += \
  -DVMHEAP_RUBY_ARCHDIR='"$(RUBY_ARCHDIR)"' \
  -DVMHEAP_RUBY_ARCH_REL='"$(patsubst $(PREFIX)/%,%,$(RUBY_ARCHDIR))"'
