// details.go owns the encoding of a property's details map into the JSON
// object the host keeps with a failing evaluation.

package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// encodeDetails returns details as a JSON object, or "" when there are none.
// When details cannot be encoded (a channel, a function, a failing
// MarshalJSON) the result is {"details_error": "<why>"}, so the property is
// still evaluated and the report says what went wrong.
func encodeDetails(details map[string]any) string {
	if len(details) == 0 {
		return ""
	}
	text, err := marshalDetails(details)
	if err != nil {
		b, _ := json.Marshal(map[string]string{"details_error": err.Error()})
		return string(b)
	}
	return text
}

// marshalDetails is encoding/json with HTML escaping off (the report is not
// HTML) and with a panicking MarshalJSON turned into an error: a property's
// details must not crash the program.
func marshalDetails(details map[string]any) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic while encoding details: %v", r)
		}
	}()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(details); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
