/* SPDX-License-Identifier: MIT */
/*
 * seed-random.h - credit the test guest's random number generator with
 * 256 bits, as a boot-time seed service does on a real machine.
 *
 * The guest has no source of entropy (no RDRAND under TCG, no virtio-rng),
 * so its random number generator stays unseeded for minutes; meanwhile
 * every random number costs a key extraction, about 10,000 instructions,
 * and every task group draws one (init_cfs_bandwidth()'s timer offset). A
 * real machine is seeded at boot (RDRAND, jitter entropy, a seed file),
 * where the draw costs a few dozen instructions. The bytes need not be
 * secret here. Header-only: the profiling guest program is built by
 * itself, outside meson.
 */
#ifndef RGROUP_TEST_NATIVE_SEED_RANDOM_H
#define RGROUP_TEST_NATIVE_SEED_RANDOM_H

#include <errno.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/*
 * Returns the bits in the pool afterwards, or -1 with errno set (needs
 * CAP_SYS_ADMIN).
 */
static inline int nt_seed_random(void)
{
	struct {
		struct rand_pool_info info;
		unsigned char buf[32];
	} e = { .info = { .entropy_count = 256, .buf_size = 32 } };
	struct timespec ts;
	int fd, rc, bits = -1;
	uint64_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (size_t k = 0; k < sizeof(e.buf); k++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		e.buf[k] = (unsigned char)(x >> 56);
	}
	fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = ioctl(fd, RNDADDENTROPY, &e);
	if (rc == 0)
		rc = ioctl(fd, RNDGETENTCNT, &bits);
	if (rc) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	return bits;
}

#endif
