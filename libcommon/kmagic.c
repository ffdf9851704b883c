#include "kmagic.h"
#include "kedge.h"
#include "kpart.h"
#include "kpred.h"

#include <string.h>

const char *kmagic_binary(const void *buf, size_t n)
{
	if (n > KMAGIC_WINDOW)
		n = KMAGIC_WINDOW;
	if (kedge_is_magic(buf, n))
		return "a kbfs edge file";
	if (kpred_is_magic(buf, n))
		return "a kbfs predecessor file";
	if (n >= KPART_MAGIC_LEN && !memcmp(buf, kpart_magic, KPART_MAGIC_LEN))
		return "a kpart rank file";
	return memchr(buf, 0, n) ? "binary data" : NULL;
}
