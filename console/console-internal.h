/*
 * console-internal.h - the pieces of vmheap-console and how they meet.
 *
 *   main.c     command-line options; picks a mode
 *   pick.c     discovery: list agents, choose one, --ps
 *   procinfo.c what /proc says of a VM now: command line, parent, user
 *   session.c  the connection: connect, call, reconnect, "the VM went away"
 *   reply.c    a reply's value decoded for the renderers (msgpack-c)
 *   lost_dump.c  the VM went away during a dump: was the dump completed?
 *   command.c  parse one command line and run it
 *   interrupt.c Ctrl-C while a dump runs: say it goes on, wait for it
 *   render.c   print reply values for people
 *   json.c     print reply values as JSON (--json)
 *   script.c   -e commands and stdin mode
 *   repl.c     the interactive prompt (libedit), history, completion
 *   histogram.c  a live histogram reply: read it, print it
 *   top.c      `top`: the live histogram refreshed like top(1)
 */
#ifndef VMHEAP_CONSOLE_INTERNAL_H
#define VMHEAP_CONSOLE_INTERNAL_H

#include <signal.h>
#include <stdio.h>

#include <msgpack.h>

#include "vmheap_agent.h"
#include "vmheap_report.h"

/* Exit statuses (see vmheap-console(1)). */
enum {
	CONSOLE_OK = 0, /* every command succeeded */
	CONSOLE_ECOMMAND =
	    1, /* a command got an error reply or was malformed */
	CONSOLE_ECONNECT =
	    2, /* no agent, cannot connect/authenticate, VM gone */
};

/* Options from the command line. */
struct console_options {
	pid_t pid;	       /* -p; 0: discover */
	const char *tmpdir;    /* discovery directory */
	int json;	       /* --json */
	int ps;		       /* --ps */
	int attach;	       /* --attach PID (in pid) */
	const char **commands; /* -e, in order */
	int ncommands;
};

/* ------------------------------------------------------- procinfo.c */

/* A VM's process as /proc shows it now. */
struct console_proc {
	pid_t ppid;	   /* parent pid; 0 when unknown */
	uid_t uid;	   /* owner; (uid_t)-1 when unknown */
	char user[33];	   /* its name, or the uid as a number, or "?" */
	char command[512]; /* /proc/PID/cmdline (a process title shows
			      here), else the argv of the discovery file */
};

/* Fill *proc for the agent `info` names. */
void console_proc_read(const struct vmheap_agent_info *info,
		       struct console_proc *proc);

/* ----------------------------------------------------------- pick.c */

/* The agents found in a discovery directory, sorted by pid. */
struct console_agents {
	struct vmheap_agent_info *items;
	struct console_proc *procs; /* procs[i]: items[i]'s process now */
	int count;
	int foreign; /* files owned by another user, not reported */
};

/*
 * Read the discovery directory.  Stale files (dead pid) are removed;
 * malformed files are skipped and, unless `quiet`, reported on stderr
 * (one line each).  Returns 0, or -1 after printing why the directory
 * cannot be read.
 */
int console_agents_find(struct console_agents *agents, const char *tmpdir,
			int quiet);

/* Free what console_agents_find() allocated. */
void console_agents_free(struct console_agents *agents);

/*
 * Say on stderr that no agent was found in `tmpdir` (`foreign`: how many
 * discovery files of other users were passed over), and what to do:
 * start one, or look in another directory with --dir.
 */
void console_print_no_agent(const char *tmpdir, int foreign);

/* Print the agents as aligned columns, or as JSON with `json`. */
void console_agents_print(const struct console_agents *agents, FILE *out,
			  int json);

/*
 * Choose the agent to talk to: the one with opts->pid, the only one, or
 * (when `ask` is set and stdin is a terminal) the one a person picks from
 * a numbered list.  On success copies it to *info and returns 0; on
 * failure prints one sentence saying why and what to do, and returns -1.
 */
int console_pick_agent(const struct console_options *opts, int ask,
		       struct vmheap_agent_info *info);

/* -------------------------------------------------------- session.c */

struct console_session {
	vmheap_client *client;
	struct vmheap_agent_info info;
	int gone; /* the VM went away; exit 2 */
	int dump_saved; /* ...but the dump it was writing is whole: exit 0 */
};

/*
 * Connect and authenticate.  On failure prints one sentence (cause and
 * what to do) on stderr and returns -1.
 */
int console_session_open(struct console_session *s,
			 const struct vmheap_agent_info *info);

/*
 * A reply as the console reads it: the agent's reply, its value decoded
 * by msgpack-c (the renderers walk msgpack_objects: the value comes as
 * MessagePack bytes from vmheap_reply_msgpack, libvmheap-agent's header
 * has no msgpack-c types).  Zeroed, it is empty; release it in every
 * case.
 */
struct console_reply {
	int ok;
	msgpack_object value; /* when ok */
	char code[32];	      /* when !ok, e.g. "busy" */
	char message[512];    /* when !ok */
	msgpack_unpacked storage_;
	vmheap_reply *reply_; /* holds the bytes that value points into */
};

/* reply.c: fill *out from the library's reply `r` (NULL: none), which it
 * takes over.  0, or -1 when the value cannot be decoded (out of memory): the
 * reply then says so as an error reply. */
int console_reply_take(struct console_reply *out, vmheap_reply *r);
/* Free what it holds and leave it empty (zeroed). */
void console_reply_release(struct console_reply *reply);

/*
 * Send one request and wait for its reply.  Returns 0 with a reply
 * (which may be an error reply), or -1 when the connection failed: the
 * reason has been printed and s->gone is set when the VM went away.  An
 * agent that dropped an idle connection while its VM lives on is
 * reconnected once, transparently.
 */
int console_session_call(struct console_session *s, const char *verb,
			 const char *path, const char *value,
			 struct console_reply *reply);

/* Close the connection. */
void console_session_close(struct console_session *s);

/* ------------------------------------------------------ lost_dump.c */

/*
 * The VM went away while `set system.memory.dump NAME` waited for its
 * reply: look for NAME in the agent's dump directory and read it to its
 * footer.  Prints what became of the dump (stdout when it is whole,
 * stderr otherwise) and returns 1 when it is whole, else 0.
 */
int console_lost_dump(const struct console_session *s, const char *name);

/* -------------------------------------------------------- command.c */

/* What a command line asked for, after console_command_run(). */
enum console_result {
	CONSOLE_RESULT_OK,    /* done */
	CONSOLE_RESULT_ERROR, /* error reply or bad command line */
	CONSOLE_RESULT_EXIT,  /* `exit` or `quit` */
	CONSOLE_RESULT_GONE,  /* the connection failed: stop, exit 2 */
};

/* The command words, NULL-terminated (for completion and help). */
extern const char *const console_command_names[];

/*
 * Run one command line (get, set, list, a bare variable, help, exit)
 * and print its result on stdout (errors on stderr).  `names_changed`
 * is set when the variable list may have changed (after a set).
 */
enum console_result console_command_run(struct console_session *s,
					const char *line, int json,
					int *names_changed);

/* Print the command summary. */
void console_command_help(FILE *out);

/*
 * Fetch every variable name with `list` into a NULL-terminated array
 * (free with console_names_free).  Returns NULL when the call failed.
 */
char **console_names_fetch(struct console_session *s);
void console_names_free(char **names);

/* ------------------------------------------------------ interrupt.c */

/* SIGINT's disposition while a dump runs. */
struct console_dump_guard {
	struct sigaction old;
	int active;
};

/*
 * Until console_dump_interrupt_end(): a Ctrl-C prints that the dump of
 * the VM `pid` goes on and that its file will be `path`, and the console
 * keeps waiting; a second Ctrl-C ends the console (SIGINT, status 130).
 */
void console_dump_interrupt_begin(struct console_dump_guard *g, pid_t pid,
				  const char *path);

/* Put SIGINT back as it was. */
void console_dump_interrupt_end(struct console_dump_guard *g);

/* --------------------------------------------------------- render.c */

/*
 * Print the value of a reply to the command `verb path` for people:
 * byte counts as KiB/MiB/GiB with the exact figure beside, a dump reply
 * as one line, maps and tables as aligned columns.
 */
void console_render_reply(FILE *out, const char *verb, const char *path,
			  const msgpack_object *value);

/*
 * A value on one line, malloc'd (never NULL): byte counts and seconds
 * with units as `name` says, a multi-line string cut after its first
 * line with " ...".
 */
char *console_render_inline(const msgpack_object *o, const char *name);

/*
 * Print `rows` x `cols` cells (row-major) as aligned columns, each line
 * starting with `indent`.  The last column is not padded.
 */
void console_print_table(FILE *out, const char *const *cells, int rows,
			 int cols, const char *indent);

/*
 * Call fn once per variable name in a `list` reply value (an array of
 * names, an array of [name, ...] rows, or a map keyed by name).
 */
void console_render_each_name(const msgpack_object *value,
			      void (*fn)(void *arg, const char *name,
					 size_t len),
			      void *arg);

/* ----------------------------------------------------------- json.c */

/* Print `value` as one line of JSON. */
void console_json_print(FILE *out, const msgpack_object *value);

/* native_sites.c: the rows of a `get system.native.sites` reply (an
 * array of maps) with each "site" resolved from the row's "frames" as
 * vmheap-histo --native resolves a dump's (libdw), and the "frames" and
 * "vm" members taken out.  Returns the strings the rows now point to
 * (free them with console_native_sites_free after printing), or NULL
 * when the reply is not such an array or memory is short (then rows keep
 * the agent's own text). */
char **console_native_sites(msgpack_object *value);
void console_native_sites_free(char **kept);

/* Print a string as a JSON string literal (quoted, escaped). */
void console_json_string(FILE *out, const char *s, size_t len);

/* --------------------------------------------------------- script.c */

/* Run the -e commands; returns the exit status. */
int console_script_commands(struct console_session *s,
			    const struct console_options *opts);

/* Run commands from a stream, one per line; returns the exit status. */
int console_script_stream(struct console_session *s, FILE *in,
			  const struct console_options *opts);

/* ------------------------------------------------------------ top.c */

/*
 * `top [SECONDS [COUNT]]`: get system.memory.histogram every `interval`
 * seconds and redraw the classes sorted by their growth since top began
 * (count, bytes, rate per minute), until `q` (or Ctrl-C, Ctrl-D) or,
 * when count > 0, after count histograms.
 */
enum console_result console_top(struct console_session *s, double interval,
				long count);

/* ------------------------------------------------------ histogram.c */

/* A reply of get system.memory.histogram (PROTOCOL.md section 6). */
struct console_histogram {
	uint64_t objects, bytes, class_count, left_out;
	double seconds;
	int forked, live_only;
	const msgpack_object *classes; /* [[name, count, bytes], ...],
					  checked; points into the reply */
};

/* Read a histogram reply: 0, or -1 when `o` is not one. */
int console_histogram_read(const msgpack_object *o,
			   struct console_histogram *h);

/* Print a reply of get system.memory.histogram as a summary line and a
 * count/class/bytes table; -1 (nothing printed) when it is not one. */
int console_render_histogram(FILE *out, const msgpack_object *value);

/* Print rows x strlen(align) cells (row-major) as a table whose columns
 * are aligned as `align` says ('r' or 'l' each). */
void console_print_aligned(FILE *out, const char *align, const char **cells,
			   size_t rows);

/* ----------------------------------------------------------- repl.c */

/* The interactive prompt; returns the exit status. */
int console_repl(struct console_session *s, const struct console_options *opts);

#endif /* VMHEAP_CONSOLE_INTERNAL_H */
