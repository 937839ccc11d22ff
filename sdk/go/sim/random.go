// random.go owns randomness drawn from the run's `random` stream: Random and
// the helpers built on it (RandomIntN, RandomFloat64, RandomChoice,
// RandomBool).

package sim

import "math/bits"

// Random returns 64 bits from the run's `random` stream (math/rand/v2 outside
// seedfall).
func Random() uint64 {
	return hostRandomU64()
}

// RandomIntN returns a uniformly distributed int in [0, n). It panics if
// n <= 0.
func RandomIntN(n int) int {
	if n <= 0 {
		panic("sim: RandomIntN called with n <= 0")
	}
	return int(uniform(uint64(n)))
}

// uniform returns an unbiased value in [0, n), n > 0, by Lemire's
// multiply-and-reject method: the high word of x*n is the result, and the
// few draws whose low word falls below 2^64 mod n are redrawn.
func uniform(n uint64) uint64 {
	hi, lo := bits.Mul64(hostRandomU64(), n)
	if lo < n {
		threshold := -n % n // 2^64 mod n
		for lo < threshold {
			hi, lo = bits.Mul64(hostRandomU64(), n)
		}
	}
	return hi
}

// RandomFloat64 returns a uniformly distributed float64 in [0, 1).
func RandomFloat64() float64 {
	return float64(hostRandomU64()>>11) / (1 << 53)
}

// RandomChoice returns a uniformly chosen element of items. It panics if items
// is empty.
func RandomChoice[T any](items []T) T {
	if len(items) == 0 {
		panic("sim: RandomChoice called with an empty slice")
	}
	return items[RandomIntN(len(items))]
}

// RandomBool returns true or false with equal probability.
func RandomBool() bool {
	return hostRandomU64()>>63 == 1
}
