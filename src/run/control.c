/* SPDX-License-Identifier: MIT */
/*
 * control.c - both ends of `rgroup set`'s channel (control.h): the
 * listener in a program under `rgroup run`, and the request from the
 * rgroup command. No allocation, no global state.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"

#define PEER_WAIT_MS   2000   /* the program, for a request */
#define ANSWER_WAIT_MS 5000   /* the rgroup command, for an answer */

int rgroup__control_name(char *out, size_t len, pid_t pid, uint64_t start)
{
	int w = snprintf(out, len, "rgroup-%d-%llu.ctl", (int)pid, (unsigned long long)start);

	if (pid <= 0)
		return -EINVAL;
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* The abstract address of (pid, start); its length, or -errno. */
static int address(struct sockaddr_un *a, pid_t pid, uint64_t start)
{
	int r;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	r = rgroup__control_name(a->sun_path + 1, sizeof(a->sun_path) - 1, pid, start);
	if (r < 0)
		return r;
	return (int)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a->sun_path + 1));
}

int rgroup__control_listen(pid_t pid, uint64_t start)
{
	struct sockaddr_un a;
	int len = address(&a, pid, start), fd, err;

	if (len < 0)
		return len;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, (socklen_t)len) < 0 || listen(fd, 4) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* Read one line within ms milliseconds in all; its length without the
 * '\n', or -errno (-ETIMEDOUT, -EMSGSIZE for a line too long, -EPIPE for
 * a peer that closed first). */
static int read_line(int fd, char *buf, size_t len, int ms)
{
	struct timespec t0, now;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl = n ? memchr(buf, '\n', n) : NULL;
		long left;
		ssize_t got;

		if (nl) {
			*nl = '\0';
			return (int)(nl - buf);
		}
		if (n + 1 >= len)
			return -EMSGSIZE;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!p.revents)
			continue;
		got = recv(fd, buf + n, len - 1 - n, MSG_DONTWAIT);
		if (got == 0)
			return -EPIPE;
		if (got < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		n += (size_t)got;
	}
}

static void answer(int fd, int err, const char *text)
{
	char line[RGROUP__CONTROL_LINE];
	int n = snprintf(line, sizeof(line), "%d %.*s\n", err, (int)sizeof(line) - 16, text);

	/* A peer that does not read gets nothing, and nothing waits for it. */
	(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Is the peer on fd allowed to change this process's groups? */
static int peer_allowed(int fd)
{
	struct ucred c;
	socklen_t n = sizeof(c);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) < 0)
		return 0;
	return c.uid == 0 || c.uid == getuid() || c.uid == geteuid();
}

static void serve_one(int fd, rgroup__control_fn *fn)
{
	char line[RGROUP__CONTROL_LINE], msg[RGROUP__CONTROL_LINE - 16] = "";
	char *group, *settings;
	int r;

	if (!peer_allowed(fd)) {
		answer(fd, EPERM, "only the process's own user, or root, may change its groups");
		return;
	}
	r = read_line(fd, line, sizeof(line), PEER_WAIT_MS);
	if (r < 0) {
		if (r == -EMSGSIZE)
			answer(fd, EINVAL, "the request is longer than a line may be");
		return;
	}
	if (strncmp(line, "set ", 4) != 0 || !(settings = strchr(line + 4, ' '))) {
		answer(fd, EINVAL, "not a request this program understands ('set GROUP SETTINGS')");
		return;
	}
	group = line + 4;
	*settings++ = '\0';
	r = fn(group, settings, msg, sizeof(msg));
	answer(fd, r < 0 ? -r : 0, msg);
}

void rgroup__control_serve(int fd, rgroup__control_fn *fn)
{
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0) {
			serve_one(c, fn);
			close(c);
		} else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			   errno == ENOMEM) {
			/* The program's own shortage: try again later. */
			struct timespec ts = { 0, 100 * 1000000 };
			nanosleep(&ts, NULL);
		} else if (errno != EINTR && errno != ECONNABORTED && errno != EPROTO) {
			return;
		}
	}
}

int rgroup__control_call(pid_t pid, pid_t ns_pid, uint64_t start, const char *group,
			 const char *settings, char *msg, size_t len)
{
	char line[RGROUP__CONTROL_LINE];
	struct sockaddr_un a;
	struct ucred c;
	socklen_t cn = sizeof(c);
	int alen = address(&a, ns_pid, start), fd, n, r;
	char *text;
	long err;

	if (alen < 0) {
		snprintf(msg, len, "no socket name for pid %d", (int)ns_pid);
		return alen;
	}
	n = snprintf(line, sizeof(line), "set %s %s\n", group, settings);
	if (n < 0 || (size_t)n >= sizeof(line) || strchr(group, ' ') || strchr(group, '\n') ||
	    strchr(settings, '\n')) {
		snprintf(msg, len, "the group or the settings do not fit in one request line");
		return -EINVAL;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(msg, len, "socket: %s", strerror(errno));
		return r;
	}
	if (connect(fd, (struct sockaddr *)&a, (socklen_t)alen) < 0) {
		r = -errno;
		snprintf(msg, len, "%s", errno == ECONNREFUSED
			 ? "it does not listen: it is not running under rgroup run, has made no group yet, or was started with --no-control"
			 : strerror(errno));
		close(fd);
		return r;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &cn) < 0 || c.pid != pid) {
		snprintf(msg, len, "its control socket is held by another process (pid %d): not asked",
			 (int)c.pid);
		close(fd);
		return -EPERM;
	}
	/* A program that refuses answers at once and closes: its answer is
	 * still there to read after a send that found it gone. */
	if (send(fd, line, (size_t)n, MSG_NOSIGNAL) != n && errno != EPIPE && errno != ECONNRESET) {
		r = -errno;
		snprintf(msg, len, "send: %s", strerror(errno));
		close(fd);
		return r;
	}
	r = read_line(fd, line, sizeof(line), ANSWER_WAIT_MS);
	close(fd);
	if (r < 0) {
		snprintf(msg, len, "%s", r == -ETIMEDOUT ? "no answer within 5 s"
					 : r == -EPIPE ? "it closed the connection without an answer"
					 : strerror(-r));
		return r;
	}
	err = strtol(line, &text, 10);
	if (text == line || *text != ' ' || err < 0 || err > 4095) {
		snprintf(msg, len, "an answer this command does not understand: '%s'", line);
		return -EPROTO;
	}
	snprintf(msg, len, "%s", text + 1);
	return (int)err;
}
