/*
 * page.c - the HTML page: page.html (built into the tool) with the
 * report's data as JSON inside <script type="application/json">.
 *
 * The JSON goes in with every '<', '>' and '&' written as \u003c, \u003e
 * and \u0026.  The JSON text itself has them only inside strings (class
 * names, file names), where these escapes mean the same characters, so
 * JSON.parse() gives the same data, while the HTML parser sees no "</"
 * that could end the script element, no "<!--" that could change how it
 * is parsed, and no character reference.
 */
#include <string.h>

#include "html-internal.h"

/* Where page.html takes the data. */
static const char marker[] = "@VMHEAP_REPORT_DATA@";

static void add_script_json(struct vmheap_strbuf *out,
			    const struct vmheap_strbuf *json)
{
	size_t from = 0;

	for (size_t i = 0; i < json->len; i++) {
		const char *esc = NULL;
		switch (json->buf[i]) {
		case '<':
			esc = "\\u003c";
			break;
		case '>':
			esc = "\\u003e";
			break;
		case '&':
			esc = "\\u0026";
			break;
		default:
			continue;
		}
		vmheap_strbuf_add(out, json->buf + from, i - from);
		vmheap_strbuf_add(out, esc, 6);
		from = i + 1;
	}
	vmheap_strbuf_add(out, json->buf + from, json->len - from);
}

void html_page(struct vmheap_strbuf *out, const struct vmheap_strbuf *json)
{
	const char *at = strstr(html_page_text, marker);
	size_t head = at ? (size_t)(at - html_page_text) : html_page_len;

	vmheap_strbuf_add(out, html_page_text, head);
	if (!at)
		return;
	add_script_json(out, json);
	at += sizeof(marker) - 1;
	vmheap_strbuf_add(out, at,
			  html_page_len - (size_t)(at - html_page_text));
}
