/* SPDX-License-Identifier: MIT */
/*
 * handles.h - the executor's handles that stay checkable (handles.c).
 *
 * Pools and groups live in slots of chunked tables. Chunks are published
 * once and never freed, so a stale handle always reaches real memory, whose
 * own mutex and generation then say the handle is stale. A handle is
 * generation << 32 | kind << 24 | (index + 1): generations start at 1 and
 * step at every free, so handles are not reused (until 2^32 reuses of one
 * slot), and the kind keeps a pool's handle from ever naming a group.
 */
#ifndef RGROUP_EXEC_HANDLES_H
#define RGROUP_EXEC_HANDLES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define CHUNK_SHIFT 8
#define CHUNK       (1u << CHUNK_SHIFT)
#define MAX_CHUNKS  256       /* 65536 slots: the library's own rgroup limit */

struct slot {
	pthread_mutex_t lock;
	uint32_t gen;             /* under lock */
	uint32_t index;
	int live;                 /* under lock: handed out, not freed */
	struct slot *free_next;   /* under the table lock */
};

struct table {
	char *chunk[MAX_CHUNKS];  /* atomic loads: a chunk is published once */
	size_t size;
	uint32_t kind;            /* 1 pools, 2 groups */
	unsigned int used;
	struct slot *free;
};

/* A slot's handle. */
uint64_t rgroup__exec_slot_id(const struct table *t, const struct slot *s);
/* The slot a handle points at, if the handle could ever have been one; its
 * generation is checked by the caller, under the slot's lock. */
struct slot *rgroup__exec_slot_at(struct table *t, uint64_t id);
/* Lock and return the live slot of handle id, or NULL. */
struct slot *rgroup__exec_slot_lock(struct table *t, uint64_t id);
/* A free slot, zeroed past its header (not yet live), or NULL (-ENOMEM or
 * -ENOSPC in *err). */
struct slot *rgroup__exec_slot_alloc(struct table *t, int *err);
/* Retire a live slot: its handle goes stale at once. Slot lock held. */
void rgroup__exec_slot_retire(struct slot *s);
/* Give a retired slot back for reuse. */
void rgroup__exec_slot_free(struct table *t, struct slot *s);

#endif /* RGROUP_EXEC_HANDLES_H */
