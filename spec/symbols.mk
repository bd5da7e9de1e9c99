# The offline symbolizer (report/symbols.c) on a stripped library:
# spec/symbols/stripped.c built as a shared library and stripped of its
# .symtab, so that only dynamic symbols name it.
SYMBOLS_TEST := $(SPECDIR)/symbols_test
SYMBOLS_LIB  := $(SPECDIR)/symbols/stripped.so
EXTRA_ALL    += $(SYMBOLS_LIB)
$(eval $(call spec_suite,symbols_test,$(OBJDIR)/spec/symbols_test.o,\
  $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) $(REPORT_NATIVE_LIBS),\
  $(SYMBOLS_LIB)))
$(SYMBOLS_TEST): private CHECK_LIBS += -ldl

$(SYMBOLS_LIB): spec/symbols/stripped.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -fno-toplevel-reorder -shared -o $@.tmp $<
	strip --strip-all $@.tmp
	mv -f $@.tmp $@
