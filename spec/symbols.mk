# The offline symbolizer (report/symbols.c) on a stripped library:
# spec/symbols/stripped.c built as a shared library and stripped of its
# .symtab, so that only dynamic symbols name it.
SYMBOLS_TEST := $(SPECDIR)/symbols_test
SYMBOLS_LIB  := $(SPECDIR)/symbols/stripped.so
CHECK_SUITES += $(SYMBOLS_TEST)
EXTRA_ALL    += $(SYMBOLS_TEST) $(SYMBOLS_LIB)

$(OBJDIR)/spec/symbols_test.o: private ALL_CFLAGS += $(CHECK_CFLAGS)

$(SYMBOLS_LIB): spec/symbols/stripped.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(NATIVE_CFLAGS) -fno-toplevel-reorder -shared -o $@.tmp $<
	strip --strip-all $@.tmp
	mv -f $@.tmp $@

$(SYMBOLS_TEST): $(OBJDIR)/spec/symbols_test.o $(SPECDIR)/libvmheap_spec.a \
                 $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) | $(SYMBOLS_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(SPECDIR)/libvmheap_spec.a \
	  $(LIBVMHEAP_REPORT_A) $(LIBVMHEAP_A) $(MSGPACK_LIBS) \
	  $(REPORT_NATIVE_LIBS) $(CHECK_LIBS) -ldl
