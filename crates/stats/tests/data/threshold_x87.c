/* Generates threshold_x87.txt: for each (p, nr), the smallest count c with
 * c >= (long double) p / 100.0 * nr, evaluated exactly as fio's calc_clat_percentiles
 * does on x86-64 (long double = x87 80-bit). Also flags where plain double differs.
 * Line format: <p as IEEE-754 bits, hex> <nr> <count>.
 * Build: gcc -O0 -o /tmp/thr threshold_x87.c -lm && /tmp/thr > threshold_x87.txt */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t st = 0x243F6A8885A308D3ULL;
static uint64_t rnd(void) { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; }

static void one(double p, unsigned long long nr) {
	volatile long double t = (long double) p / 100.0 * nr;
	volatile double td = p / 100.0 * (double) nr;
	unsigned long long c = (unsigned long long) ceill(t);
	unsigned long long cd = (unsigned long long) ceil(td);
	uint64_t bits;
	memcpy(&bits, &p, sizeof(bits));
	printf("%016llx %llu %llu%s\n", (unsigned long long) bits, nr, c,
	       c != cd ? " differs-from-double" : "");
}

int main(void) {
	static const double plist[] = { 1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5,
		99.9, 99.95, 99.99, 99.999, 99.9999, 0.01, 0.1, 12.5, 33.333, 66.667, 100 };
	for (unsigned i = 0; i < sizeof(plist) / sizeof(plist[0]); i++)
		for (unsigned long long nr = 1; nr <= 2000; nr += 19)
			one(plist[i], nr);
	for (int i = 0; i < 2000; i++) {
		double p = (double) (rnd() % 100000000) / 1e6 + 1e-6;
		unsigned long long nr = rnd() % (i < 1000 ? 100000 : 10000000000ULL) + 1;
		one(p, nr);
	}
	return 0;
}
