/*
 * tools_harness.c - dumps, processes and parsers for the tools' suite.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools_harness-internal.h"
#include "vmheap.h"

/* ------------------------------------------------------------ files */

const char *tmp_dir(void)
{
	return spec_root();
}

const char *tmp_path(const char *name)
{
	static char ring[8][PATH_MAX];
	static unsigned next;
	char *p = ring[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", tmp_dir(), name);
	return p;
}

const char *write_dump(const char *name, const struct tdump *d)
{
	static const char *const kinds[] = {"object", "string", "array",
					    "hash"};
	const char *path = tmp_path(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));

	struct vmheap_writer_options opt = VMHEAP_WRITER_OPTIONS_INIT;
	opt.vm_name = d->vm ? d->vm : "sample";
	opt.vm_version = d->vm_version ? d->vm_version : "1.0";
	opt.pid = d->pid ? d->pid : 1234;
	opt.time = d->time ? d->time : d->time_ms ? 0 : 1700000000;
	opt.time_ms = d->time_ms;
	opt.kind_names = kinds;
	opt.kind_count = 4;
	opt.block_bytes = d->block_bytes;
	vmheap_writer *w;
	ck_assert_int_eq(vmheap_writer_open(&w, fd, &opt), 0);
	for (size_t i = 0; i < d->nclasses; i++)
		ck_assert_int_eq(vmheap_writer_add_class(
				     w, d->classes[i].id, d->classes[i].name,
				     strlen(d->classes[i].name), 0, 0),
				 0);
	for (size_t i = 0; i < d->nroots; i++)
		ck_assert_int_eq(vmheap_writer_add_string(
				     w, d->roots[i].string_id, d->roots[i].kind,
				     strlen(d->roots[i].kind)),
				 0);
	for (size_t i = 0; i < d->nobjs; i++) {
		const struct tobj *o = &d->objs[i];
		ck_assert_int_eq(vmheap_writer_add_object(
				     w, o->id, o->cls, o->bytes, o->kind,
				     o->many ? o->many : o->refs, o->nrefs),
				 0);
	}
	for (size_t i = 0; i < d->nroots; i++)
		ck_assert_int_eq(vmheap_writer_add_root(w,
							d->roots[i].string_id,
							d->roots[i].object),
				 0);
	ck_assert_msg(vmheap_writer_finish(w) == 0, "finish: %s",
		      vmheap_writer_error(w));
	vmheap_writer_free(w);
	ck_assert_int_eq(close(fd), 0);
	return path;
}

char *slurp(const char *path, size_t *len)
{
	char *buf = spec_read_file(path, len);

	ck_assert_msg(buf != NULL, "read %s: %s", path, strerror(errno));
	return buf;
}

/* ------------------------------------------------------------ text */

size_t parse_text_rows(const char *out, struct trow *rows, size_t max)
{
	size_t n = 0;
	const char *line = out;

	while (*line && n < max) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		char buf[512];
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = eol ? eol + 1 : line + len;

		/* a last "%" column (the share of the total) is dropped */
		char *pct = strrchr(buf, ' ');
		if (pct &&
		    (pct[strlen(pct) - 1] == '%' || !strcmp(pct, " -"))) {
			while (pct > buf && pct[-1] == ' ')
				pct--;
			*pct = '\0';
		}
		char *p = buf;
		while (*p == ' ')
			p++;
		if (!(isdigit((unsigned char)*p) || *p == '+' || *p == '-'))
			continue;
		char *end;
		long long count = strtoll(p, &end, 10);
		if (end == p || *end != ' ')
			continue;
		char *last = strrchr(buf, ' ');
		if (!last || last <= end)
			continue;
		long long bytes = strtoll(last + 1, &end, 10);
		if (*end)
			continue;
		/* the name: between the two numbers, trimmed */
		char *ns = p + strcspn(p, " ");
		while (*ns == ' ')
			ns++;
		char *ne = last;
		while (ne > ns && ne[-1] == ' ')
			ne--;
		struct trow *r = &rows[n++];
		r->count = count;
		r->bytes = bytes;
		size_t nl = (size_t)(ne - ns);
		if (nl >= sizeof(r->name))
			nl = sizeof(r->name) - 1;
		memcpy(r->name, ns, nl);
		r->name[nl] = '\0';
	}
	return n;
}

/* ------------------------------------------------------------ CSV */

char ***parse_csv(const char *s, size_t *nrows)
{
	char ***rows = NULL;
	size_t n = 0;

	while (*s) {
		char **fields = NULL;
		size_t nf = 0;
		for (;;) {
			size_t cap = strlen(s) + 1, k = 0;
			char *f = malloc(cap);
			ck_assert_ptr_nonnull(f);
			if (*s == '"') {
				s++;
				for (;;) {
					ck_assert_msg(*s, "unterminated quote");
					if (*s == '"' && s[1] == '"') {
						f[k++] = '"';
						s += 2;
					} else if (*s == '"') {
						s++;
						break;
					} else {
						f[k++] = *s++;
					}
				}
			} else {
				while (*s && *s != ',' && *s != '\n' &&
				       *s != '\r')
					f[k++] = *s++;
			}
			f[k] = '\0';
			fields = realloc(fields, (nf + 2) * sizeof(*fields));
			fields[nf++] = f;
			fields[nf] = NULL;
			if (*s == ',') {
				s++;
				continue;
			}
			if (*s == '\r')
				s++;
			ck_assert_msg(*s == '\n' || !*s,
				      "CSV: junk after a field: %.20s", s);
			if (*s)
				s++;
			break;
		}
		rows = realloc(rows, (n + 1) * sizeof(*rows));
		rows[n++] = fields;
	}
	*nrows = n;
	return rows;
}

void csv_free(char ***rows, size_t nrows)
{
	for (size_t i = 0; i < nrows; i++) {
		for (char **f = rows[i]; *f; f++)
			free(*f);
		free(rows[i]);
	}
	free(rows);
}

/* ------------------------------------------------------------ JSON */

struct jp {
	const char *p;
	int bad;
};

static void jws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')
		j->p++;
}

static struct jval *jnew(enum jtype t)
{
	struct jval *v = calloc(1, sizeof(*v));
	ck_assert_ptr_nonnull(v);
	v->type = t;
	return v;
}

static char *jstring(struct jp *j)
{
	if (*j->p != '"') {
		j->bad = 1;
		return NULL;
	}
	j->p++;
	size_t cap = strlen(j->p) + 1, k = 0;
	char *s = malloc(cap);
	ck_assert_ptr_nonnull(s);
	while (*j->p != '"') {
		unsigned char c = (unsigned char)*j->p;
		if (!c || c < 0x20) {
			j->bad = 1;
			free(s);
			return NULL;
		}
		if (c == '\\') {
			j->p++;
			switch (*j->p) {
			case '"':
				s[k++] = '"';
				break;
			case '\\':
				s[k++] = '\\';
				break;
			case '/':
				s[k++] = '/';
				break;
			case 'n':
				s[k++] = '\n';
				break;
			case 'r':
				s[k++] = '\r';
				break;
			case 't':
				s[k++] = '\t';
				break;
			case 'b':
				s[k++] = '\b';
				break;
			case 'f':
				s[k++] = '\f';
				break;
			case 'u': {
				unsigned u;
				if (sscanf(j->p + 1, "%4x", &u) != 1 ||
				    u > 0x7f) {
					j->bad = 1; /* tests use ASCII only */
					free(s);
					return NULL;
				}
				s[k++] = (char)u;
				j->p += 4;
				break;
			}
			default:
				j->bad = 1;
				free(s);
				return NULL;
			}
			j->p++;
		} else {
			s[k++] = (char)c;
			j->p++;
		}
	}
	j->p++;
	s[k] = '\0';
	return s;
}

static struct jval *jvalue(struct jp *j, int depth)
{
	struct jval *v;

	jws(j);
	if (depth > 32) {
		j->bad = 1;
		return NULL;
	}
	if (*j->p == '{' || *j->p == '[') {
		int obj = *j->p == '{';
		char close = obj ? '}' : ']';
		v = jnew(obj ? J_OBJ : J_ARR);
		j->p++;
		jws(j);
		if (*j->p == close) {
			j->p++;
			return v;
		}
		for (;;) {
			char *key = NULL;
			jws(j);
			if (obj) {
				key = jstring(j);
				jws(j);
				if (j->bad || *j->p != ':') {
					free(key);
					j->bad = 1;
					return v;
				}
				j->p++;
			}
			struct jval *item = jvalue(j, depth + 1);
			v->items =
			    realloc(v->items, (v->n + 1) * sizeof(*v->items));
			v->keys =
			    realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
			v->items[v->n] = item;
			v->keys[v->n] = key;
			v->n++;
			if (j->bad)
				return v;
			jws(j);
			if (*j->p == ',') {
				j->p++;
				continue;
			}
			if (*j->p == close) {
				j->p++;
				return v;
			}
			j->bad = 1;
			return v;
		}
	}
	if (*j->p == '"') {
		v = jnew(J_STR);
		v->str = jstring(j);
		return v;
	}
	if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
		v = jnew(J_BOOL);
		v->inum = *j->p == 't';
		j->p += v->inum ? 4 : 5;
		return v;
	}
	if (!strncmp(j->p, "null", 4)) {
		j->p += 4;
		return jnew(J_NULL);
	}
	if (*j->p == '-' || isdigit((unsigned char)*j->p)) {
		char *end;
		v = jnew(J_NUM);
		v->inum = strtoll(j->p, &end, 10);
		v->num = strtod(j->p, &end);
		j->p = end;
		return v;
	}
	j->bad = 1;
	return NULL;
}

struct jval *json_parse(const char *text)
{
	struct jp j = {text, 0};
	struct jval *v = jvalue(&j, 0);
	jws(&j);
	if (j.bad || *j.p) {
		json_free(v);
		return NULL;
	}
	return v;
}

const struct jval *json_get(const struct jval *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (obj->keys[i] && !strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

void json_free(struct jval *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}
