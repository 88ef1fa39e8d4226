// SPDX-License-Identifier: GPL-2.0-only
/*
 * hwcrypto_test: crypto drivers that are wrong or slow on purpose, for testing
 * pytest-hwcrypto's suites against a real faulty driver. Never load it on a system
 * whose crypto matters: with a fault switched on, a driver here returns wrong bytes.
 *
 * Four drivers, each a thin synchronous wrapper around the kernel's generic code:
 *   0 cbc-aes-hwcrypto-test-a   cbc(aes)   wraps cbc(aes-generic)
 *   1 cbc-aes-hwcrypto-test-b   cbc(aes)   wraps cbc(aes-generic)
 *   2 gcm-aes-hwcrypto-test     gcm(aes)   wraps gcm_base(ctr(aes-generic),ghash-generic)
 *   3 sha256-hwcrypto-test      sha256     the kernel's sha256 library
 *
 * Every parameter is an array with one value per driver, in that order, so a fault or a
 * slowdown hits exactly one driver. All but `priority` can be changed at run time through
 * /sys/module/hwcrypto_test/parameters/ (write all four values: "0,0,0,0"):
 *   wrong_min_bytes   corrupt the output of requests of at least N bytes (-1: never)
 *   wrong_decrypt     corrupt the output of decryptions only
 *   wrong_odd_split   corrupt the output when a source or destination scatterlist entry
 *                     starts at an odd offset or ends at an odd length before the end
 *   wrong_key_bytes   corrupt the output when the key has this many bytes (0: never)
 *   stale_iv          do not hand back the chained IV (skciphers): the next request of a
 *                     stream that continues from it (AF_ALG, dm-crypt's IV is per sector)
 *                     starts from the old IV
 *   delay_us          busy-wait this long per request (real time, also under emulation)
 *   delay_ns_per_kib  and this long per KiB of the request
 *   work_per_kib      run this many rounds of a dependent arithmetic loop per KiB: extra
 *                     instructions, which get slower and faster with the CPU as the
 *                     driver's own code does (under emulation the board's speed moves by
 *                     up to 2x between runs, and a real-time delay is then a different
 *                     share of each request; a slowdown by work stays the same share)
 *   priority          (load time) the drivers' cra_priority
 *
 * The kernel self-tests each driver when it is registered: a fault switched on at load
 * time that the kernel's own vectors reach makes that self-test fail.
 *
 * A corrupted output has its last byte inverted: the request still succeeds, only the
 * bytes are wrong, as with a real driver bug.
 *
 * A fifth driver behaves like an offload engine rather than a CPU driver:
 *   cbc-aes-hwcrypto-test-async  cbc(aes)  CRYPTO_ALG_ASYNC, wraps cbc(aes-generic)
 * Requests are queued (crypto_queue, with backlog for CRYPTO_TFM_REQ_MAY_BACKLOG) and
 * served by `async_flows` flows, each a work item on an unbound workqueue that works one
 * request at a time: it computes the result, then sleeps until the request has taken
 * `async_latency_us` plus `async_ns_per_kib` per KiB -- the CPU idle, as while an engine
 * works -- and completes it. So K flows give at most K times one flow's throughput, reached
 * only with K requests in flight. Its parameters are plain values, not arrays:
 *   async_flows        (load time) parallel flows, K (1..64)
 *   async_latency_us   time a request takes, microseconds (slept, not spun)
 *   async_ns_per_kib   and this long per KiB of the request
 *   async_priority     (load time) its cra_priority
 *   async_driver_only  (load time) also flag it CRYPTO_ALG_KERN_DRIVER_ONLY, as a real
 *                      engine's driver is
 *   async_skip_compute do not compute the result (the output is the input, wrong on
 *                      purpose): a timing model whose work is all off the CPU, as an
 *                      engine's is -- only for throughput tests, never for correctness
 *   async_lose_every   every Nth request is never completed (0: none) -- a lost
 *                      completion, as from an engine that dropped an interrupt: the
 *                      caller waits forever. The flow keeps the request aside instead.
 *   async_lost         reads as the number of requests kept aside; writing anything
 *                      completes them all with -EIO, as a driver's timeout handler or
 *                      an engine reset would, so their callers return (also at unload)
 *   async_queue_len    requests the queue holds before it answers -EBUSY (1..128): a
 *                      request the caller let backlog (CRYPTO_TFM_REQ_MAY_BACKLOG) is
 *                      then backlogged, and notified with -EINPROGRESS when it moves up
 *   async_busy         -EBUSY answers so far (write 0 to start again)
 *   async_busy_drops   the backlog fault: a full queue answers -EBUSY and keeps nothing,
 *                      so the request -EBUSY promised to complete never is (kept aside
 *                      with the lost ones, async_lost releases it)
 *   async_reorder_every completions out of order (0: none): every Nth request, once
 *                      served, is held back until another request in flight has been
 *                      completed, then completed after it -- each request's own output
 *                      still right (alone, with nothing else in flight, it is not held)
 *   async_reorder_swap the bug on top: the held request and the one that releases it
 *                      swap outputs, so each completion carries the other's data
 *   async_reordered    completions held back so far (write 0 to start again)
 *
 * A hw_random source, hwcrypto_test_rng (quality 16: low, so the core does not make it
 * current in place of a real source, yet credited, so only its faults fail), whose output is the
 * kernel's get_random_bytes() unless a fault is on (plain values, writable at run time):
 *   rng_stuck_ones     OR this mask into every 32-bit word (little-endian): stuck bits
 *   rng_repeat_every   output repeats every N bytes (0: never; at most 65536)
 *   rng_delay_us       sleep this long per read call: a slow source
 *   rng_short_read     hand back at most N bytes per read call (0: all asked for)
 */

#include <linux/delay.h>
#include <linux/hw_random.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/workqueue.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <crypto/aes.h>
#include <crypto/algapi.h>
#include <crypto/gcm.h>
#include <crypto/internal/aead.h>
#include <crypto/internal/hash.h>
#include <crypto/internal/skcipher.h>
#include <crypto/scatterwalk.h>
#include <crypto/sha2.h>

enum { DRV_CBC_A, DRV_CBC_B, DRV_GCM, DRV_SHA256, DRV_COUNT };

static int priority[DRV_COUNT] = { 50, 50, 50, 50 };
static int wrong_min_bytes[DRV_COUNT] = { -1, -1, -1, -1 };
static bool wrong_decrypt[DRV_COUNT];
static bool wrong_odd_split[DRV_COUNT];
static unsigned int wrong_key_bytes[DRV_COUNT];
static bool stale_iv[DRV_COUNT];
static unsigned int delay_us[DRV_COUNT];
static unsigned int delay_ns_per_kib[DRV_COUNT];
static unsigned int work_per_kib[DRV_COUNT];

module_param_array(priority, int, NULL, 0444);
MODULE_PARM_DESC(priority, "cra_priority of each driver (load time)");
module_param_array(wrong_min_bytes, int, NULL, 0644);
MODULE_PARM_DESC(wrong_min_bytes, "corrupt requests of at least N bytes (-1: never)");
module_param_array(wrong_decrypt, bool, NULL, 0644);
MODULE_PARM_DESC(wrong_decrypt, "corrupt decryptions");
module_param_array(wrong_odd_split, bool, NULL, 0644);
MODULE_PARM_DESC(wrong_odd_split, "corrupt requests whose scatterlists split at an odd offset");
module_param_array(wrong_key_bytes, uint, NULL, 0644);
MODULE_PARM_DESC(wrong_key_bytes, "corrupt requests under a key of this length (0: never)");
module_param_array(stale_iv, bool, NULL, 0644);
MODULE_PARM_DESC(stale_iv, "do not return the chained IV");
module_param_array(delay_us, uint, NULL, 0644);
MODULE_PARM_DESC(delay_us, "busy-wait per request, microseconds");
module_param_array(delay_ns_per_kib, uint, NULL, 0644);
MODULE_PARM_DESC(delay_ns_per_kib, "busy-wait per KiB of request, nanoseconds");
module_param_array(work_per_kib, uint, NULL, 0644);
MODULE_PARM_DESC(work_per_kib, "extra arithmetic rounds per KiB of request");

static unsigned int async_flows = 4;
static unsigned int async_latency_us;
static unsigned int async_ns_per_kib;
static int async_priority = 50;
static bool async_driver_only;
static bool async_skip_compute;

module_param(async_flows, uint, 0444);
MODULE_PARM_DESC(async_flows, "parallel flows of the asynchronous driver (load time)");
module_param(async_latency_us, uint, 0644);
MODULE_PARM_DESC(async_latency_us, "time an asynchronous request takes, microseconds");
module_param(async_ns_per_kib, uint, 0644);
MODULE_PARM_DESC(async_ns_per_kib, "and per KiB of the request, nanoseconds");
module_param(async_priority, int, 0444);
MODULE_PARM_DESC(async_priority, "cra_priority of the asynchronous driver (load time)");
module_param(async_driver_only, bool, 0444);
MODULE_PARM_DESC(async_driver_only, "flag the asynchronous driver KERN_DRIVER_ONLY (load time)");
module_param(async_skip_compute, bool, 0644);
MODULE_PARM_DESC(async_skip_compute, "do not compute (wrong output): all its time off the CPU");

static unsigned int async_lose_every;

module_param(async_lose_every, uint, 0644);
MODULE_PARM_DESC(async_lose_every, "never complete every Nth asynchronous request (0: none)");

#define ASYNC_QUEUE_LEN 128

static unsigned int async_queue_len = ASYNC_QUEUE_LEN;
static unsigned int async_busy;
static bool async_busy_drops;

module_param(async_queue_len, uint, 0644);
MODULE_PARM_DESC(async_queue_len, "queued requests before -EBUSY (1..128)");
module_param(async_busy, uint, 0644);
MODULE_PARM_DESC(async_busy, "-EBUSY answers so far (write 0 to start again)");
module_param(async_busy_drops, bool, 0644);
MODULE_PARM_DESC(async_busy_drops, "fault: a full queue answers -EBUSY and drops the request");

static unsigned int async_reorder_every;
static bool async_reorder_swap;
static unsigned int async_reordered;

module_param(async_reorder_every, uint, 0644);
MODULE_PARM_DESC(async_reorder_every, "complete every Nth request after the next one (0: none)");
module_param(async_reorder_swap, bool, 0644);
MODULE_PARM_DESC(async_reorder_swap, "fault: a held request and its releaser swap outputs");
module_param(async_reordered, uint, 0644);
MODULE_PARM_DESC(async_reordered, "completions held back so far (write 0 to start again)");

/* Read once per request: a value written meanwhile applies from the next request. */
#define PARAM(name, drv) READ_ONCE(name[drv])

/* Where extra_work() leaves its result, so the compiler cannot drop the loop. */
static u32 work_sink;

static void extra_work(int drv, unsigned int nbytes)
{
	u64 rounds = div_u64((u64)nbytes * PARAM(work_per_kib, drv), 1024);
	u32 x = nbytes;

	/* Each round depends on the last, and the compiler may not see through x. */
	while (rounds--) {
		x = x * 1664525u + 1013904223u;
		OPTIMIZER_HIDE_VAR(x);
	}
	WRITE_ONCE(work_sink, x);
}

static void slow_down(int drv, unsigned int nbytes)
{
	u64 ns = (u64)PARAM(delay_us, drv) * NSEC_PER_USEC +
		 div_u64((u64)nbytes * PARAM(delay_ns_per_kib, drv), 1024);

	/* udelay() is only good for short waits: spin in pieces of at most 1 ms. */
	while (ns >= NSEC_PER_USEC) {
		u64 us = min_t(u64, div_u64(ns, NSEC_PER_USEC), USEC_PER_MSEC);

		udelay(us);
		ns -= us * NSEC_PER_USEC;
	}
	if (ns)
		ndelay(ns);
	extra_work(drv, nbytes);
}

static bool odd_split(struct scatterlist *sg, unsigned int skip, unsigned int nbytes)
{
	unsigned int seen = 0;

	for (; sg && seen < skip + nbytes; sg = sg_next(sg)) {
		if (sg->offset & 1)
			return true;
		seen += sg->length;
		if (seen < skip + nbytes && (sg->length & 1))
			return true;
	}
	return false;
}

struct fault_query {
	int drv;
	unsigned int nbytes;
	unsigned int keylen;
	bool decrypting;
	struct scatterlist *src, *dst;
	unsigned int skip; /* bytes before the data in both lists (AEAD associated data) */
};

static bool faulty(const struct fault_query *q)
{
	int min_bytes = PARAM(wrong_min_bytes, q->drv);
	unsigned int key_bytes = PARAM(wrong_key_bytes, q->drv);

	if (min_bytes >= 0 && q->nbytes >= (unsigned int)min_bytes)
		return true;
	if (q->decrypting && PARAM(wrong_decrypt, q->drv))
		return true;
	if (key_bytes && q->keylen == key_bytes)
		return true;
	if (PARAM(wrong_odd_split, q->drv) &&
	    (odd_split(q->src, q->skip, q->nbytes) || odd_split(q->dst, q->skip, q->nbytes)))
		return true;
	return false;
}

/* Invert the last byte of the `nbytes` of output that start `skip` bytes into `sg`. */
static void corrupt(struct scatterlist *sg, unsigned int skip, unsigned int nbytes)
{
	u8 byte;

	if (!nbytes)
		return;
	scatterwalk_map_and_copy(&byte, sg, skip + nbytes - 1, 1, 0);
	byte ^= 0xff;
	scatterwalk_map_and_copy(&byte, sg, skip + nbytes - 1, 1, 1);
}

/* --- cbc(aes) ------------------------------------------------------------------------- */

struct cbc_ctx {
	struct crypto_skcipher *fallback;
	unsigned int keylen;
};

static int cbc_init(struct crypto_skcipher *tfm)
{
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);

	/* The generic driver by its driver name: by "cbc(aes)" we could get ourselves. */
	ctx->fallback = crypto_alloc_skcipher("cbc(aes-generic)", 0,
					      CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(ctx->fallback))
		return PTR_ERR(ctx->fallback);
	crypto_skcipher_set_reqsize(tfm, sizeof(struct skcipher_request) +
					 crypto_skcipher_reqsize(ctx->fallback));
	return 0;
}

static void cbc_exit(struct crypto_skcipher *tfm)
{
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);

	crypto_free_skcipher(ctx->fallback);
}

static int cbc_setkey(struct crypto_skcipher *tfm, const u8 *key, unsigned int keylen)
{
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);

	ctx->keylen = keylen;
	return crypto_skcipher_setkey(ctx->fallback, key, keylen);
}

static int cbc_crypt(struct skcipher_request *req, int drv, bool decrypting)
{
	struct crypto_skcipher *tfm = crypto_skcipher_reqtfm(req);
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);
	struct skcipher_request *sub = skcipher_request_ctx(req);
	struct fault_query q = {
		.drv = drv, .nbytes = req->cryptlen, .keylen = ctx->keylen,
		.decrypting = decrypting, .src = req->src, .dst = req->dst,
	};
	bool wrong = faulty(&q); /* before: in place, src is overwritten */
	u8 iv_in[AES_BLOCK_SIZE];
	int err;

	memcpy(iv_in, req->iv, AES_BLOCK_SIZE);
	slow_down(drv, req->cryptlen);
	skcipher_request_set_tfm(sub, ctx->fallback);
	skcipher_request_set_callback(sub, req->base.flags & CRYPTO_TFM_REQ_MAY_SLEEP, NULL, NULL);
	skcipher_request_set_crypt(sub, req->src, req->dst, req->cryptlen, req->iv);
	err = decrypting ? crypto_skcipher_decrypt(sub) : crypto_skcipher_encrypt(sub);
	if (err)
		return err;
	if (wrong)
		corrupt(req->dst, 0, req->cryptlen);
	if (PARAM(stale_iv, drv))
		memcpy(req->iv, iv_in, AES_BLOCK_SIZE);
	return 0;
}

static int cbc_a_encrypt(struct skcipher_request *req) { return cbc_crypt(req, DRV_CBC_A, false); }
static int cbc_a_decrypt(struct skcipher_request *req) { return cbc_crypt(req, DRV_CBC_A, true); }
static int cbc_b_encrypt(struct skcipher_request *req) { return cbc_crypt(req, DRV_CBC_B, false); }
static int cbc_b_decrypt(struct skcipher_request *req) { return cbc_crypt(req, DRV_CBC_B, true); }

#define CBC_ALG(suffix, enc, dec) {						\
	.base = {								\
		.cra_name = "cbc(aes)",						\
		.cra_driver_name = "cbc-aes-hwcrypto-test-" suffix,		\
		.cra_blocksize = AES_BLOCK_SIZE,				\
		.cra_ctxsize = sizeof(struct cbc_ctx),				\
		.cra_module = THIS_MODULE,					\
	},									\
	.min_keysize = AES_MIN_KEY_SIZE,					\
	.max_keysize = AES_MAX_KEY_SIZE,					\
	.ivsize = AES_BLOCK_SIZE,						\
	.setkey = cbc_setkey,							\
	.encrypt = enc,								\
	.decrypt = dec,								\
	.init = cbc_init,							\
	.exit = cbc_exit,							\
}

static struct skcipher_alg cbc_algs[] = {
	CBC_ALG("a", cbc_a_encrypt, cbc_a_decrypt),
	CBC_ALG("b", cbc_b_encrypt, cbc_b_decrypt),
};

/* --- gcm(aes) ------------------------------------------------------------------------- */

struct gcm_ctx {
	struct crypto_aead *fallback;
	unsigned int keylen;
};

static int gcm_init(struct crypto_aead *tfm)
{
	struct gcm_ctx *ctx = crypto_aead_ctx(tfm);

	ctx->fallback = crypto_alloc_aead("gcm_base(ctr(aes-generic),ghash-generic)", 0,
					  CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(ctx->fallback))
		return PTR_ERR(ctx->fallback);
	crypto_aead_set_reqsize(tfm, sizeof(struct aead_request) +
				     crypto_aead_reqsize(ctx->fallback));
	return 0;
}

static void gcm_exit(struct crypto_aead *tfm)
{
	struct gcm_ctx *ctx = crypto_aead_ctx(tfm);

	crypto_free_aead(ctx->fallback);
}

static int gcm_setkey(struct crypto_aead *tfm, const u8 *key, unsigned int keylen)
{
	struct gcm_ctx *ctx = crypto_aead_ctx(tfm);

	ctx->keylen = keylen;
	return crypto_aead_setkey(ctx->fallback, key, keylen);
}

static int gcm_setauthsize(struct crypto_aead *tfm, unsigned int authsize)
{
	struct gcm_ctx *ctx = crypto_aead_ctx(tfm);

	return crypto_aead_setauthsize(ctx->fallback, authsize);
}

static int gcm_crypt(struct aead_request *req, bool decrypting)
{
	struct crypto_aead *tfm = crypto_aead_reqtfm(req);
	struct gcm_ctx *ctx = crypto_aead_ctx(tfm);
	struct aead_request *sub = aead_request_ctx(req);
	unsigned int authsize = crypto_aead_authsize(tfm);
	/* The payload: ciphertext without the tag when decrypting. */
	unsigned int payload = decrypting ? req->cryptlen - authsize : req->cryptlen;
	struct fault_query q = {
		.drv = DRV_GCM, .nbytes = payload, .keylen = ctx->keylen,
		.decrypting = decrypting, .src = req->src, .dst = req->dst, .skip = req->assoclen,
	};
	bool wrong;
	int err;

	if (decrypting && req->cryptlen < authsize)
		return -EINVAL;
	wrong = faulty(&q);
	slow_down(DRV_GCM, req->cryptlen);
	aead_request_set_tfm(sub, ctx->fallback);
	aead_request_set_callback(sub, req->base.flags & CRYPTO_TFM_REQ_MAY_SLEEP, NULL, NULL);
	aead_request_set_crypt(sub, req->src, req->dst, req->cryptlen, req->iv);
	aead_request_set_ad(sub, req->assoclen);
	err = decrypting ? crypto_aead_decrypt(sub) : crypto_aead_encrypt(sub);
	if (err)
		return err;
	/* The last byte out: of the plaintext, or of the tag when encrypting. */
	if (wrong)
		corrupt(req->dst, req->assoclen, decrypting ? payload : payload + authsize);
	return 0;
}

static int gcm_encrypt(struct aead_request *req) { return gcm_crypt(req, false); }
static int gcm_decrypt(struct aead_request *req) { return gcm_crypt(req, true); }

static struct aead_alg gcm_alg = {
	.base = {
		.cra_name = "gcm(aes)",
		.cra_driver_name = "gcm-aes-hwcrypto-test",
		.cra_blocksize = 1,
		.cra_ctxsize = sizeof(struct gcm_ctx),
		.cra_module = THIS_MODULE,
	},
	.ivsize = GCM_AES_IV_SIZE,
	.maxauthsize = AES_BLOCK_SIZE,
	.setkey = gcm_setkey,
	.setauthsize = gcm_setauthsize,
	.encrypt = gcm_encrypt,
	.decrypt = gcm_decrypt,
	.init = gcm_init,
	.exit = gcm_exit,
};

/* --- sha256 --------------------------------------------------------------------------- */

static int sha256_test_init(struct shash_desc *desc)
{
	sha256_init(shash_desc_ctx(desc));
	return 0;
}

static int sha256_test_update(struct shash_desc *desc, const u8 *data, unsigned int len)
{
	slow_down(DRV_SHA256, len);
	sha256_update(shash_desc_ctx(desc), data, len);
	return 0;
}

static int sha256_test_final(struct shash_desc *desc, u8 *out)
{
	struct sha256_state *state = shash_desc_ctx(desc);
	/* The message length is known only here; an shash sees no scatterlists. */
	struct fault_query q = { .drv = DRV_SHA256, .nbytes = (unsigned int)state->count };

	sha256_final(state, out);
	if (faulty(&q))
		out[SHA256_DIGEST_SIZE - 1] ^= 0xff;
	return 0;
}

static struct shash_alg sha256_alg = {
	.digestsize = SHA256_DIGEST_SIZE,
	.init = sha256_test_init,
	.update = sha256_test_update,
	.final = sha256_test_final,
	.descsize = sizeof(struct sha256_state),
	.base = {
		.cra_name = "sha256",
		.cra_driver_name = "sha256-hwcrypto-test",
		.cra_blocksize = SHA256_BLOCK_SIZE,
		.cra_module = THIS_MODULE,
	},
};

/* --- cbc(aes), asynchronous ----------------------------------------------------------- */

#define ASYNC_MAX_FLOWS 64

struct async_flow {
	struct work_struct work;
	bool busy; /* queued or working; under async_lock */
};

struct async_reqctx {
	bool decrypting;
	struct skcipher_request sub; /* last: the fallback's request context follows it */
};

static struct workqueue_struct *async_wq;
static struct async_flow *flows;
static unsigned int nflows;
static struct crypto_queue async_queue;
static DEFINE_SPINLOCK(async_lock);
/* Requests never completed (async_lose_every), until async_lost is written; under async_lock. */
static LIST_HEAD(async_lost_list);
static unsigned int async_lost_count;
static atomic_t async_served = ATOMIC_INIT(0);
/*
 * Completions out of order (async_reorder_every): requests taken from the queue and not
 * yet completed, held or lost, and the one request held back with its result, until
 * another completes; all under async_lock.
 */
static unsigned int async_in_service;
static unsigned int async_finished;
static struct skcipher_request *async_held;
static int async_held_err;

static void async_complete(struct crypto_async_request *base, int err)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	crypto_request_complete(base, err);
#else
	base->complete(base, err);
#endif
}

/* Sleep `us` with little slack (fsleep() may sleep up to twice as long). */
static void async_sleep(u64 us)
{
	if (us <= 10) {
		udelay(us);
		return;
	}
	usleep_range(us, us + div_u64(us, 64) + 1);
}

/* Is this request the one of every async_lose_every that is lost? Then keep it aside. */
static bool async_lose(struct skcipher_request *req)
{
	unsigned int every = READ_ONCE(async_lose_every);

	if (!every || atomic_inc_return(&async_served) % every)
		return false;
	spin_lock_bh(&async_lock);
	list_add_tail(&req->base.list, &async_lost_list); /* dequeued: the list is free */
	async_lost_count++;
	async_in_service--;
	spin_unlock_bh(&async_lock);
	return true;
}

/* Complete every request kept aside with `err`; their callers return. */
static void async_release_lost(int err)
{
	struct crypto_async_request *base, *next;
	LIST_HEAD(lost);

	struct skcipher_request *held;
	int held_err;

	spin_lock_bh(&async_lock);
	list_splice_init(&async_lost_list, &lost);
	async_lost_count = 0;
	/* A held request whose releaser was lost would wait for ever: it goes too, as it is. */
	held = async_held;
	held_err = async_held_err;
	async_held = NULL;
	spin_unlock_bh(&async_lock);
	list_for_each_entry_safe(base, next, &lost, list) {
		list_del(&base->list);
		local_bh_disable();
		async_complete(base, err);
		local_bh_enable();
	}
	if (held) {
		local_bh_disable();
		async_complete(&held->base, held_err);
		local_bh_enable();
	}
}

static int async_lost_set(const char *value, const struct kernel_param *kp)
{
	async_release_lost(-EIO);
	return 0;
}

static int async_lost_get(char *buffer, const struct kernel_param *kp)
{
	unsigned int count;

	spin_lock_bh(&async_lock);
	count = async_lost_count;
	spin_unlock_bh(&async_lock);
	return sysfs_emit(buffer, "%u\n", count);
}

static const struct kernel_param_ops async_lost_ops = {
	.set = async_lost_set,
	.get = async_lost_get,
};
module_param_cb(async_lost, &async_lost_ops, NULL, 0644);
MODULE_PARM_DESC(async_lost, "requests never completed so far; write to complete them with -EIO");

/* The swap fault: each of two requests' destinations gets the other's output. */
static void async_swap_outputs(struct skcipher_request *a, struct skcipher_request *b)
{
	unsigned int len = min(a->cryptlen, b->cryptlen);
	u8 *buf = kvmalloc(2 * (size_t)len, GFP_KERNEL);

	if (!buf)
		return;
	sg_copy_to_buffer(a->dst, sg_nents(a->dst), buf, len);
	sg_copy_to_buffer(b->dst, sg_nents(b->dst), buf + len, len);
	sg_copy_from_buffer(a->dst, sg_nents(a->dst), buf + len, len);
	sg_copy_from_buffer(b->dst, sg_nents(b->dst), buf, len);
	kvfree(buf);
}

/*
 * Complete `req` (served, with `err`), unless async_reorder_every holds it back: every
 * Nth served request waits, while another is queued or being served, until that other one
 * has been completed, and is completed right after it.
 */
static void async_finish(struct skcipher_request *req, int err)
{
	unsigned int every = READ_ONCE(async_reorder_every);
	struct skcipher_request *held;
	int held_err;

	spin_lock_bh(&async_lock);
	async_in_service--;
	if (every && !async_held && ++async_finished % every == 0 &&
	    (async_in_service || async_queue.qlen)) {
		async_held = req;
		async_held_err = err;
		async_reordered++;
		spin_unlock_bh(&async_lock);
		return;
	}
	held = async_held;
	held_err = async_held_err;
	async_held = NULL;
	spin_unlock_bh(&async_lock);
	if (held && READ_ONCE(async_reorder_swap))
		async_swap_outputs(req, held);
	/* Completions run with bottom halves off, as from an engine's interrupt tasklet. */
	local_bh_disable();
	async_complete(&req->base, err);
	if (held)
		async_complete(&held->base, held_err);
	local_bh_enable();
}

static void async_serve(struct skcipher_request *req)
{
	struct crypto_skcipher *tfm = crypto_skcipher_reqtfm(req);
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);
	struct async_reqctx *rctx = skcipher_request_ctx(req);
	u64 takes = (u64)READ_ONCE(async_latency_us) * NSEC_PER_USEC +
		    div_u64((u64)req->cryptlen * READ_ONCE(async_ns_per_kib), 1024);
	ktime_t start = ktime_get();
	s64 left;
	int err;

	if (READ_ONCE(async_skip_compute)) {
		/* An engine's work happens off the CPU: leave the data as it is. */
		err = 0;
	} else {
		skcipher_request_set_tfm(&rctx->sub, ctx->fallback);
		skcipher_request_set_callback(&rctx->sub, CRYPTO_TFM_REQ_MAY_SLEEP, NULL, NULL);
		skcipher_request_set_crypt(&rctx->sub, req->src, req->dst, req->cryptlen,
					   req->iv);
		err = rctx->decrypting ? crypto_skcipher_decrypt(&rctx->sub) :
					 crypto_skcipher_encrypt(&rctx->sub);
	}
	/* The rest of the request's time is waited out asleep: the CPU is free meanwhile. */
	left = (s64)takes - ktime_to_ns(ktime_sub(ktime_get(), start));
	if (left >= NSEC_PER_USEC)
		async_sleep(div_u64(left, NSEC_PER_USEC));
	async_finish(req, err);
}

static void async_flow_work(struct work_struct *work)
{
	struct async_flow *flow = container_of(work, struct async_flow, work);
	struct crypto_async_request *backlog, *base;

	for (;;) {
		spin_lock_bh(&async_lock);
		backlog = crypto_get_backlog(&async_queue);
		base = crypto_dequeue_request(&async_queue);
		if (!base)
			flow->busy = false; /* under the lock: an enqueue after this kicks us */
		else
			async_in_service++;
		spin_unlock_bh(&async_lock);
		if (!base)
			return;
		if (backlog) {
			local_bh_disable();
			async_complete(backlog, -EINPROGRESS);
			local_bh_enable();
		}
		if (async_lose(skcipher_request_cast(base)))
			continue;
		async_serve(skcipher_request_cast(base));
		cond_resched();
	}
}

static int async_crypt(struct skcipher_request *req, bool decrypting)
{
	struct async_reqctx *rctx = skcipher_request_ctx(req);
	unsigned int i;
	int err;

	rctx->decrypting = decrypting;
	spin_lock_bh(&async_lock);
	async_queue.max_qlen = clamp_t(unsigned int, READ_ONCE(async_queue_len), 1,
				       ASYNC_QUEUE_LEN);
	if (READ_ONCE(async_busy_drops) && async_queue.qlen >= async_queue.max_qlen) {
		/* The fault: -EBUSY promises a completion that never comes. */
		async_busy++;
		list_add_tail(&req->base.list, &async_lost_list);
		async_lost_count++;
		spin_unlock_bh(&async_lock);
		return -EBUSY;
	}
	err = crypto_enqueue_request(&async_queue, &req->base);
	if (err == -EBUSY)
		async_busy++; /* backlogged: -EINPROGRESS when it moves up, then completed */
	/* Wake an idle flow; busy ones look at the queue again before they go idle. */
	for (i = 0; i < nflows && (err == -EINPROGRESS || err == -EBUSY); i++) {
		if (!flows[i].busy) {
			flows[i].busy = true;
			queue_work(async_wq, &flows[i].work);
			break;
		}
	}
	spin_unlock_bh(&async_lock);
	return err;
}

static int async_init_tfm(struct crypto_skcipher *tfm)
{
	struct cbc_ctx *ctx = crypto_skcipher_ctx(tfm);

	ctx->fallback = crypto_alloc_skcipher("cbc(aes-generic)", 0,
					      CRYPTO_ALG_ASYNC | CRYPTO_ALG_ALLOCATES_MEMORY);
	if (IS_ERR(ctx->fallback))
		return PTR_ERR(ctx->fallback);
	crypto_skcipher_set_reqsize(tfm, sizeof(struct async_reqctx) +
					 crypto_skcipher_reqsize(ctx->fallback));
	return 0;
}

static int async_encrypt(struct skcipher_request *req) { return async_crypt(req, false); }
static int async_decrypt(struct skcipher_request *req) { return async_crypt(req, true); }

static struct skcipher_alg async_alg = {
	.base = {
		.cra_name = "cbc(aes)",
		.cra_driver_name = "cbc-aes-hwcrypto-test-async",
		.cra_flags = CRYPTO_ALG_ASYNC,
		.cra_blocksize = AES_BLOCK_SIZE,
		.cra_ctxsize = sizeof(struct cbc_ctx),
		.cra_module = THIS_MODULE,
	},
	.min_keysize = AES_MIN_KEY_SIZE,
	.max_keysize = AES_MAX_KEY_SIZE,
	.ivsize = AES_BLOCK_SIZE,
	.setkey = cbc_setkey,
	.encrypt = async_encrypt,
	.decrypt = async_decrypt,
	.init = async_init_tfm,
	.exit = cbc_exit,
};

static int async_start(void)
{
	unsigned int i;

	nflows = clamp_t(unsigned int, async_flows, 1, ASYNC_MAX_FLOWS);
	flows = kcalloc(nflows, sizeof(*flows), GFP_KERNEL);
	if (!flows)
		return -ENOMEM;
	for (i = 0; i < nflows; i++)
		INIT_WORK(&flows[i].work, async_flow_work);
	async_wq = alloc_workqueue("hwcrypto_test_async", WQ_UNBOUND, nflows);
	if (!async_wq) {
		kfree(flows);
		return -ENOMEM;
	}
	crypto_init_queue(&async_queue, ASYNC_QUEUE_LEN);
	async_alg.base.cra_priority = async_priority;
	if (async_driver_only)
		async_alg.base.cra_flags |= CRYPTO_ALG_KERN_DRIVER_ONLY;
	return 0;
}

static void async_stop(void)
{
	destroy_workqueue(async_wq); /* drains: every queued request is served first */
	async_release_lost(-EIO);
	kfree(flows);
}

/* --- the test hw_random source ------------------------------------------------------- */

#define RNG_REPEAT_MAX 65536

static unsigned int rng_stuck_ones;
module_param(rng_stuck_ones, uint, 0644);
MODULE_PARM_DESC(rng_stuck_ones, "OR this mask into every 32-bit word of output");
static unsigned int rng_repeat_every;
module_param(rng_repeat_every, uint, 0644);
MODULE_PARM_DESC(rng_repeat_every, "output repeats every N bytes (0: never)");
static unsigned int rng_delay_us;
module_param(rng_delay_us, uint, 0644);
MODULE_PARM_DESC(rng_delay_us, "sleep per read call, microseconds");
static unsigned int rng_short_read;
module_param(rng_short_read, uint, 0644);
MODULE_PARM_DESC(rng_short_read, "at most N bytes per read call (0: all)");

static u8 *rng_pattern;		/* the repeated output, filled once */
static unsigned int rng_position;	/* where the repeat is, under the core's reading_mutex */

static int test_rng_read(struct hwrng *rng, void *data, size_t max, bool wait)
{
	unsigned int period = min_t(unsigned int, READ_ONCE(rng_repeat_every), RNG_REPEAT_MAX);
	unsigned int short_read = READ_ONCE(rng_short_read);
	unsigned int stuck = READ_ONCE(rng_stuck_ones);
	unsigned int delay = READ_ONCE(rng_delay_us);
	u8 *out = data;
	size_t i;

	if (short_read && max > short_read)
		max = short_read;
	if (delay)
		usleep_range(delay, delay + delay / 8 + 1);
	if (period) {
		for (i = 0; i < max; i++) {
			rng_position %= period;
			out[i] = rng_pattern[rng_position++];
		}
	} else {
		get_random_bytes(out, max);
	}
	if (stuck) {
		/* byte i of the output is byte (i % 4) of a little-endian word */
		for (i = 0; i < max; i++)
			out[i] |= (stuck >> (8 * (i % 4))) & 0xff;
	}
	return max;
}

static struct hwrng test_rng = {
	.name = "hwcrypto_test_rng",
	.read = test_rng_read,
	.quality = 16,
};

static int test_rng_start(void)
{
	int err;

	rng_pattern = kmalloc(RNG_REPEAT_MAX, GFP_KERNEL);
	if (!rng_pattern)
		return -ENOMEM;
	get_random_bytes(rng_pattern, RNG_REPEAT_MAX);
	err = hwrng_register(&test_rng);
	if (err)
		kfree(rng_pattern);
	return err;
}

static void test_rng_stop(void)
{
	hwrng_unregister(&test_rng);
	kfree(rng_pattern);
}

/* --- registration --------------------------------------------------------------------- */

static int __init hwcrypto_test_init(void)
{
	int err;

	cbc_algs[0].base.cra_priority = priority[DRV_CBC_A];
	cbc_algs[1].base.cra_priority = priority[DRV_CBC_B];
	gcm_alg.base.cra_priority = priority[DRV_GCM];
	sha256_alg.base.cra_priority = priority[DRV_SHA256];

	pr_warn("hwcrypto_test: test-only drivers that can be made wrong or slow on purpose\n");
	/*
	 * A self-test failure does not make registration fail: the kernel keeps the driver
	 * listed (selftest: unknown) and never hands it out, which is what the inventory
	 * suite is to find.
	 */
	err = crypto_register_skciphers(cbc_algs, ARRAY_SIZE(cbc_algs));
	if (err)
		return err;
	err = crypto_register_aead(&gcm_alg);
	if (err)
		goto undo_cbc;
	err = crypto_register_shash(&sha256_alg);
	if (err)
		goto undo_gcm;
	err = async_start();
	if (err)
		goto undo_sha256;
	err = crypto_register_skcipher(&async_alg);
	if (err)
		goto undo_async;
	err = test_rng_start();
	if (err)
		goto undo_async_alg;
	return 0;

undo_async_alg:
	crypto_unregister_skcipher(&async_alg);
undo_async:
	async_stop();
undo_sha256:
	crypto_unregister_shash(&sha256_alg);
undo_gcm:
	crypto_unregister_aead(&gcm_alg);
undo_cbc:
	crypto_unregister_skciphers(cbc_algs, ARRAY_SIZE(cbc_algs));
	return err;
}

static void __exit hwcrypto_test_exit(void)
{
	test_rng_stop();
	crypto_unregister_skcipher(&async_alg);
	async_stop();
	crypto_unregister_shash(&sha256_alg);
	crypto_unregister_aead(&gcm_alg);
	crypto_unregister_skciphers(cbc_algs, ARRAY_SIZE(cbc_algs));
}

module_init(hwcrypto_test_init);
module_exit(hwcrypto_test_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only crypto drivers, wrong or slow on purpose (pytest-hwcrypto)");
