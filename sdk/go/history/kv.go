// kv.go owns the ready-made key-value model: Get, Put and Append on string
// keys, partitioned by key.

package history

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// KVOp is the kind of a key-value operation.
type KVOp uint8

const (
	OpGet KVOp = iota
	OpPut
	OpAppend
)

// KVInput is the input of one operation of the [KV] model.
type KVInput struct {
	Op    KVOp
	Key   string
	Value string // Put: the new value; Append: the suffix; Get: unused
}

// KVOutput is the output of one operation of the [KV] model: for a Get, the
// value read ("" when the key is absent); ignored for Put and Append.
type KVOutput struct {
	Value string
}

// Get reads key.
func Get(key string) KVInput { return KVInput{Op: OpGet, Key: key} }

// Put sets key to value.
func Put(key, value string) KVInput { return KVInput{Op: OpPut, Key: key, Value: value} }

// Append appends suffix to key's value.
func Append(key, suffix string) KVInput { return KVInput{Op: OpAppend, Key: key, Value: suffix} }

// Value is the output of an operation of the [KV] model: what a Get read
// ("" for an absent key). Writes may return Value("").
func Value(v string) KVOutput { return KVOutput{Value: v} }

// KV is a linearizable key-value store whose keys all start absent (""):
// Put sets a key, Append extends it, Get returns it. Its inputs are
// [KVInput], its outputs [KVOutput]; a nil output (a pending operation) is
// consistent with any state. It partitions the history by key, so the check
// is as fast as the busiest key's history allows.
func KV() porcupine.Model {
	return porcupine.Model{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			index := map[string]int{}
			var parts [][]porcupine.Operation
			for _, op := range ops {
				k := op.Input.(KVInput).Key
				i, ok := index[k]
				if !ok {
					i = len(parts)
					index[k] = i
					parts = append(parts, nil)
				}
				parts[i] = append(parts[i], op)
			}
			return parts
		},
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			s, in := state.(string), input.(KVInput)
			switch in.Op {
			case OpPut:
				return true, in.Value
			case OpAppend:
				return true, s + in.Value
			default:
				if output == nil {
					return true, s
				}
				return output.(KVOutput).Value == s, s
			}
		},
		Equal: func(a, b any) bool { return a.(string) == b.(string) },
		DescribeOperation: func(input, output any) string {
			in := input.(KVInput)
			switch in.Op {
			case OpPut:
				return fmt.Sprintf("put(%q, %q)", in.Key, in.Value)
			case OpAppend:
				return fmt.Sprintf("append(%q, %q)", in.Key, in.Value)
			default:
				if output == nil {
					return fmt.Sprintf("get(%q) -> ?", in.Key)
				}
				return fmt.Sprintf("get(%q) -> %q", in.Key, output.(KVOutput).Value)
			}
		},
		DescribeState: func(state any) string { return fmt.Sprintf("%q", state) },
	}
}
