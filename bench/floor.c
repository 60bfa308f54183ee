/* The floor for `headroom probe` (issue 31 item 1): the cheapest reader of the same
 * process table, compiled and timed by bench/all.py beside probe and ps.
 *
 *   floor stat      opendir /proc; for each numeric entry open, read and close
 *                   /proc/PID/stat once; count processes and zombies. It cannot tell whose
 *                   a process is (stat has no uid), so it is a floor below what probe must do.
 *   floor status    the same with /proc/PID/status, once per process: state, real uid and
 *                   thread count, the facts slot counting needs (RLIMIT_NPROC counts tasks by
 *                   real uid). The floor probe is held to.
 *
 * Prints one line of counts, so the work cannot be optimised away and a reader that went
 * wrong shows. One buffer, no allocation per process, no stdio on the read path.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char buf[16384];

/* The value after `key` (which ends in ':') on its own line of BUF, or NULL. */
static const char *field(const char *b, const char *key) {
	size_t n = strlen(key);
	for (const char *p = b; p && *p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (strncmp(p, key, n) == 0)
			return p + n;
	}
	return NULL;
}

int main(int argc, char **argv) {
	int status = argc > 1 && strcmp(argv[1], "status") == 0;
	if (argc != 2 || (!status && strcmp(argv[1], "stat") != 0)) {
		fprintf(stderr, "usage: floor stat|status\n");
		return 64;
	}
	unsigned ruid = getuid();
	DIR *d = opendir("/proc");
	if (!d) {
		perror("/proc");
		return 1;
	}
	int dfd = dirfd(d);
	long procs = 0, zombies = 0, mine = 0, my_tasks = 0;
	char path[300];
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s", e->d_name, status ? "status" : "stat");
		int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* gone between readdir and open */
		ssize_t n = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		procs++;
		if (!status) {
			/* The state follows the last ')' (a name may hold parentheses). */
			char *r = strrchr(buf, ')');
			if (r && r[1] == ' ' && r[2] == 'Z')
				zombies++;
			continue;
		}
		const char *st = field(buf, "State:");
		const char *uid = field(buf, "Uid:");
		const char *th = field(buf, "Threads:");
		if (!st || !uid || !th)
			continue;
		while (*st == ' ' || *st == '\t')
			st++;
		if (*st == 'Z')
			zombies++;
		if ((unsigned)strtoul(uid, NULL, 10) == ruid) {
			mine++;
			my_tasks += strtol(th, NULL, 10);
		}
	}
	closedir(d);
	if (status)
		printf("%ld processes, %ld zombies; uid %u: %ld processes, %ld tasks\n", procs,
		       zombies, ruid, mine, my_tasks);
	else
		printf("%ld processes, %ld zombies\n", procs, zombies);
	return 0;
}
