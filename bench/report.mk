# bench/report.mk - vmheap-report on a big heap, and how fast its file
# opens in headless Chromium:
#
#   make bench-report [REPORT_BENCH_OBJECTS=3000000] [REPORT_BENCH_CLASSES=2000]
#
# Two pairs of gen_dump heaps of REPORT_BENCH_OBJECTS objects, the second
# of each with a 100,000-object leak: in REPORT_BENCH_CLASSES classes, then
# in ten times as many with every class changed (every cap of the report
# full).  For each: vmheap-report's time and peak RSS, the HTML file's size
# (the bench fails at 5 MB or more), then five loads of the file in
# Chromium (spec/report_html_browser.js): the time from navigation to the
# load event and to the first frames after it (the median is the figure).
REPORT_BENCH_OBJECTS ?= 3000000
REPORT_BENCH_CLASSES ?= 2000
REPORT_BENCH_DIR := $(BUILD)/bench/report
BENCH_TARGETS += bench-report

.PHONY: bench-report
bench-report: $(BUILD)/bench/gen_dump $(HTML_BIN)
	@mkdir -p $(REPORT_BENCH_DIR)
	@sh bench/report_bench.sh $(BUILD) $(REPORT_BENCH_OBJECTS) \
	  $(REPORT_BENCH_CLASSES) $(REPORT_BENCH_DIR)
