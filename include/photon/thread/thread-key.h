// Coroutine-local storage keys, pthread_key-style: each coroutine sees its own
// value per key; destructors run when a coroutine ends (not for the main
// coroutine of a vCPU, whose values live until photon::fini).
#pragma once

#include <cstdint>
#include <cstdlib>

namespace photon {

using thread_key_t = uint64_t;

// Returns 0, or -1 with EAGAIN when all keys are taken.
int thread_key_create(thread_key_t* key, void (*dtor)(void*));
// The calling coroutine's value (nullptr if unset or the key was deleted).
void* thread_getspecific(thread_key_t key);
// Returns 0, or -1 with EINVAL for a deleted key / ENOSYS outside a vCPU.
int thread_setspecific(thread_key_t key, const void* value);
// Frees the key; values are not destroyed (as pthread_key_delete).
int thread_key_delete(thread_key_t key);

}  // namespace photon
