package loop

import "testing"

func TestCompareTS_Numeric(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1.1", "1.1", 0}, {"1.1", "1.10", 0}, {"1.1", "1.2", -1}, {"9.0", "10.0", -1},
		{"1700000000.000100", "1700000000.000100", 0},
		{"1700000000.0001", "1700000000.000100", 0},
		{"1700000000.000099", "1700000000.000100", -1},
		{"999999999.999999", "1700000000.000000", -1},
		{"1700000001", "1700000000.999999", 1},
		{"", "1", -1},
	}
	for _, c := range cases {
		if got := CompareTS(c.a, c.b); got != c.want {
			t.Errorf("CompareTS(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
