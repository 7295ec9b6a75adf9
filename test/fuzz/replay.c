/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run one fuzz target over its corpus, without libFuzzer: the
 * main() that `meson test` links with each fuzz-*.c, so that every input
 * the fuzzers ever kept is replayed on each run (with the suite's own
 * compiler, and under the sanitizers when the build uses them). A parser
 * that crashes, aborts or trips a sanitizer on any of them fails the test.
 *
 *   fuzz-replay-NAME CORPUS_DIR     exit 0: every input ran
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	char path[4096];
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	if (!(d = opendir(argv[1]))) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		FILE *f;
		size_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		if (!(f = fopen(path, "rb"))) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			closedir(d);
			return 1;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		n++;
	}
	closedir(d);
	printf("%d inputs of %s replayed\n", n, argv[1]);
	return n > 0 ? 0 : 1;
}
