/*
 * stripped.c - a shared library for spec/symbols_test.c, built with
 * -fno-toplevel-reorder (its functions in this order) and then stripped
 * of .symtab: only its dynamic symbols name it.  vmheap_spec_exported
 * is one, with its size; hidden() follows it and has none, so an address
 * in hidden() lies past the end of the nearest dynamic symbol before it.
 */
__attribute__((noinline, visibility("default"))) int
vmheap_spec_exported(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int hidden(int x)
{
	return x * 5 + 2;
}

/* hidden's address, for the test to find it. */
__attribute__((visibility("default"))) int (*vmheap_spec_hidden)(int) = hidden;
