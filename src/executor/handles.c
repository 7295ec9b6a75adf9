/* SPDX-License-Identifier: MIT */
/*
 * handles.c - see handles.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handles.h"

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t rgroup__exec_slot_id(const struct table *t, const struct slot *s)
{
	return (uint64_t)s->gen << 32 | t->kind << 24 | (s->index + 1);
}

struct slot *rgroup__exec_slot_at(struct table *t, uint64_t id)
{
	uint32_t idx = ((uint32_t)id & 0xffffff) - 1;
	char *chunk;

	if (((uint32_t)id >> 24) != t->kind || idx >= MAX_CHUNKS * CHUNK)
		return NULL;
	chunk = __atomic_load_n(&t->chunk[idx >> CHUNK_SHIFT], __ATOMIC_ACQUIRE);
	return chunk ? (struct slot *)(chunk + (idx & (CHUNK - 1)) * t->size) : NULL;
}

struct slot *rgroup__exec_slot_lock(struct table *t, uint64_t id)
{
	struct slot *s = rgroup__exec_slot_at(t, id);

	if (!s)
		return NULL;
	pthread_mutex_lock(&s->lock);
	if (s->live && s->gen == (uint32_t)(id >> 32))
		return s;
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct slot *rgroup__exec_slot_alloc(struct table *t, int *err)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&table_lock);
	if (t->free) {
		s = t->free;
		t->free = s->free_next;
	} else if (t->used < MAX_CHUNKS * CHUNK) {
		unsigned int c = t->used >> CHUNK_SHIFT;
		char *chunk = t->chunk[c];

		if (!chunk) {
			chunk = calloc(CHUNK, t->size);
			if (!chunk) {
				*err = -ENOMEM;
				goto out;
			}
			for (unsigned int i = 0; i < CHUNK; i++) {
				struct slot *n = (struct slot *)(chunk + i * t->size);
				pthread_mutex_init(&n->lock, NULL);
				n->gen = 1;
				n->index = c * CHUNK + i;
			}
			__atomic_store_n(&t->chunk[c], chunk, __ATOMIC_RELEASE);
		}
		s = (struct slot *)(chunk + (t->used & (CHUNK - 1)) * t->size);
		t->used++;
	} else {
		*err = -ENOSPC;
	}
out:
	pthread_mutex_unlock(&table_lock);
	if (s) {
		pthread_mutex_lock(&s->lock);
		memset((char *)s + sizeof(*s), 0, t->size - sizeof(*s));
		pthread_mutex_unlock(&s->lock);
	}
	return s;
}

void rgroup__exec_slot_retire(struct slot *s)
{
	s->live = 0;
	if (++s->gen == 0)
		s->gen = 1;
}

void rgroup__exec_slot_free(struct table *t, struct slot *s)
{
	pthread_mutex_lock(&table_lock);
	s->free_next = t->free;
	t->free = s;
	pthread_mutex_unlock(&table_lock);
}

