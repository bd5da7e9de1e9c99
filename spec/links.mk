# The Markdown links (scripts/check-links.sh) as a suite of make check:
# every relative link of a tracked *.md file must resolve.  The suite
# first makes sure that the check itself fails on a broken link and an
# unknown anchor (a fixture tree made on the fly), then checks the tree.
# It also keeps README.md a newcomer's page: at most 300 lines (issue 30;
# the manual is in doc/).
LINKS_CHECK := $(SPECDIR)/check-links
CHECK_SUITES += $(LINKS_CHECK)
EXTRA_ALL    += $(LINKS_CHECK)

$(LINKS_CHECK): spec/links.mk
	@mkdir -p $(dir $@)
	@{ echo '#!/bin/sh'; \
	   echo 'set -e'; \
	   echo 'script="$$VMHEAP_SRC/scripts/check-links.sh"'; \
	   echo 'fix=$$(mktemp -d); trap "rm -rf $$fix" EXIT'; \
	   echo 'mkdir "$$fix/sub"; printf "# Top\n" > "$$fix/top.md"'; \
	   echo 'printf "[ok](../top.md#top)\n" > "$$fix/sub/good.md"'; \
	   echo 'sh "$$script" "$$fix" > /dev/null || { echo "check-links: refused a good link"; exit 1; }'; \
	   echo 'printf "see DESIGN.md\n" > "$$fix/sub/bad.md"'; \
	   echo 'if sh "$$script" "$$fix" > /dev/null; then echo "check-links: accepted a missing file"; exit 1; fi'; \
	   echo 'printf "[x](../top.md#nowhere)\n" > "$$fix/sub/bad.md"'; \
	   echo 'if sh "$$script" "$$fix" > /dev/null; then echo "check-links: accepted a missing anchor"; exit 1; fi'; \
	   echo 'n=$$(wc -l < "$$VMHEAP_SRC/README.md")'; \
	   echo 'if [ "$$n" -gt 300 ]; then echo "README.md: $$n lines, more than 300: move the manual text to doc/"; exit 1; fi'; \
	   echo 'exec sh "$$script" "$$VMHEAP_SRC"'; } > $@
	@chmod +x $@
