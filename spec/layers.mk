# The layout's arrows (scripts/check-layers.sh) as a suite of make check:
# a forbidden #include fails it.
LAYERS_CHECK := $(SPECDIR)/check-layers
CHECK_SUITES += $(LAYERS_CHECK)
EXTRA_ALL    += $(LAYERS_CHECK)

$(LAYERS_CHECK): spec/layers.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'exec sh "$$VMHEAP_SRC/scripts/check-layers.sh" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@
