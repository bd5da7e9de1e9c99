# examples: leak.rb and the `make demo` session (examples/demo.sh).
#
# make demo: install what is missing, build, then find the leak in
# examples/leak.rb on a real Ruby VM: two dumps through vmheap-console,
# vmheap-histo of the first, vmheap-diff of the two (Message on top).
demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory all
	@sh examples/demo.sh "$(abspath $(BUILD))"
