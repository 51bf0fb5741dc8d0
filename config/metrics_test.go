package config

import (
	"strconv"
	"strings"
	"testing"
)

func TestMetricsSection(t *testing.T) {
	for in, want := range map[string]Metrics{
		"metrics: {listen: 127.0.0.1:9342}":                {Listen: "127.0.0.1:9342", Path: "/metrics"},
		"metrics: {listen: '[::1]:80', path: /m}":          {Listen: "[::1]:80", Path: "/m"},
		"metrics: {listen: ':9342'}":                       {Listen: ":9342", Path: "/metrics"},
		"metrics:\n  listen: localhost:9342\n  path: /x/y": {Listen: "localhost:9342", Path: "/x/y"},
	} {
		c, err := Parse("m.yaml", []byte("router-id: 10.0.0.1\n"+in+"\n"))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if c.Metrics == nil || *c.Metrics != want {
			t.Errorf("%q: got %+v, want %+v", in, c.Metrics, want)
		}
	}
	c, err := Parse("m.yaml", []byte("router-id: 10.0.0.1\n"))
	if err != nil || c.Metrics != nil {
		t.Fatalf("no section: %+v %v", c.Metrics, err)
	}
}

// Every mistake in the section is reported at its line.
func TestMetricsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"metrics: # <-\n":    `metrics: expected a mapping, got no value`,
		"metrics: {} # <-\n": `metrics: missing required key "listen" (host:port, e.g. 127.0.0.1:9342)`,
		"metrics:\n  path: /m\n# <- (the key's line)\n":  `metrics: missing required key "listen"`,
		"metrics:\n  listen: 9342 # <-\n":                `listen: "9342": want host:port`,
		"metrics:\n  listen: 'a:b' # <-\n":               `listen: "a:b": port "b" must be a number 1..65535`,
		"metrics:\n  listen: ':0' # <-\n":                `listen: ":0": port "0" must be a number 1..65535`,
		"metrics:\n  listen: ':65536' # <-\n":            `port "65536" must be a number 1..65535`,
		"metrics:\n  listen: 'a b:1' # <-\n":             `host "a b" is neither an address nor a name`,
		"metrics:\n  listen: :1\n  path: metrics # <-\n": `path: "metrics": must be a URL path starting with /`,
		"metrics:\n  listen: :1\n  port: 1 # <-\n":       `unknown key "port"`,
		"metrics:\n  listen: [a] # <-\n":                 `listen: expected a string, got a list`,
	} {
		_, err := Parse("m.yaml", []byte("router-id: 10.0.0.1\n"+in))
		if err == nil {
			t.Errorf("%q: accepted", in)
			continue
		}
		// The line marked "<-"; "the key's line" marks the section's key.
		line := 2
		for i, l := range strings.Split(in, "\n") {
			if strings.Contains(l, "# <-") && !strings.Contains(l, "key's line") {
				line = i + 2
			}
		}
		pre := "m.yaml:" + strconv.Itoa(line) + ": "
		if !strings.HasPrefix(err.Error(), pre) || !strings.Contains(err.Error(), want) {
			t.Errorf("%q:\n got  %v\n want %s...%s", in, err, pre, want)
		}
	}
}
