/* SPDX-License-Identifier: MIT */
/*
 * tbcount.c - a QEMU TCG plugin that counts the guest's instructions by
 * where they run, in windows the guest program marks itself.
 *
 * Every translated block is counted each time it runs (an inline add, so
 * the guest must run in one TCG thread, -accel tcg,thread=single: the adds
 * are not atomic); blocks at kernel addresses are kept apart by their start
 * address, user space is one bucket per block length. Each time the block
 * at "mark=ADDR" (hex) runs, for example the entry of a system call that
 * the guest program makes only to mark a window, every count is
 * snapshotted. At exit "out=FILE" gets a line "# marks M", then one line
 * per block that ran: "ADDR INSNS SNAP1 ... SNAPM FINAL" (ADDR 0 for user
 * space), from which a window's instructions per function follow
 * (profile.py).
 *
 * A rep-prefixed string instruction is a block of its own that runs once
 * per iteration, so a memset() of N bytes by rep stosb counts N, as
 * qemu's -icount does: what this measures is what an icount guest's clock
 * measures.
 *
 * The plugin interface of qemu 7.2 (API version 1); its header is not
 * packaged in Debian, so the few entry points used are declared here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu, void *udata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *udata);

enum { QEMU_PLUGIN_INLINE_ADD_U64 = 0 };
enum { QEMU_PLUGIN_CB_NO_REGS = 0 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op,
					      void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
					  int flags, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *udata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_MARKS 16
#define KERNEL_START 0xffff800000000000ULL
#define BUCKETS (1u << 20)

struct block {
	uint64_t vaddr, insns, runs;
	uint64_t snap[MAX_MARKS];
	struct block *next;
};

static struct block **table;
static uint64_t mark_addr;
static int marks;
static const char *out_path = "tbcount.out";

/* The block's record; a block translated again (same start and length)
 * keeps counting in the same one */
static struct block *block_of(uint64_t vaddr, uint64_t insns)
{
	size_t h = (size_t)((vaddr * 0x9e3779b97f4a7c15ULL ^ insns) >> 40) & (BUCKETS - 1);
	struct block *b;

	for (b = table[h]; b; b = b->next)
		if (b->vaddr == vaddr && b->insns == insns)
			return b;
	b = calloc(1, sizeof(*b));
	if (!b) {
		fputs("tbcount: out of memory\n", stderr);
		abort();
	}
	b->vaddr = vaddr;
	b->insns = insns;
	b->next = table[h];
	table[h] = b;
	return b;
}

static void on_mark(unsigned int vcpu, void *udata)
{
	struct block *b;

	(void)vcpu;
	(void)udata;
	if (marks == MAX_MARKS)
		return;
	for (size_t i = 0; i < BUCKETS; i++)
		for (b = table[i]; b; b = b->next)
			b->snap[marks] = b->runs;
	marks++;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	struct block *b = block_of(vaddr >= KERNEL_START ? vaddr : 0, qemu_plugin_tb_n_insns(tb));

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &b->runs, 1);
	if (mark_addr && vaddr == mark_addr)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark, QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void on_exit_write(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out_path, "w");
	struct block *b;

	(void)id;
	(void)udata;
	if (!f) {
		perror(out_path);
		return;
	}
	fprintf(f, "# marks %d\n", marks);
	for (size_t i = 0; i < BUCKETS; i++)
		for (b = table[i]; b; b = b->next) {
			if (!b->runs)
				continue;
			fprintf(f, "%llx %llu", (unsigned long long)b->vaddr,
				(unsigned long long)b->insns);
			for (int k = 0; k < marks; k++)
				fprintf(f, " %llu", (unsigned long long)b->snap[k]);
			fprintf(f, " %llu\n", (unsigned long long)b->runs);
		}
	if (fclose(f))
		perror(out_path);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv)
{
	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "mark=", 5)) {
			mark_addr = strtoull(argv[i] + 5, NULL, 16);
		} else if (!strncmp(argv[i], "out=", 4)) {
			out_path = strdup(argv[i] + 4);
		} else {
			fprintf(stderr, "tbcount: unknown argument '%s'\n", argv[i]);
			return -1;
		}
	}
	table = calloc(BUCKETS, sizeof(*table));
	if (!table || !out_path)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_write, NULL);
	return 0;
}
