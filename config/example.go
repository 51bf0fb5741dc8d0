package config

// Example returns a valid, commented example config file.
func Example() string { return example }

const example = `# fared example configuration (schema: docs/config.md)
hostname: leaf1                 # TLV 137; default: os.Hostname()
router-id: 10.255.0.1           # IPv4, required; TE router id (TLV 134)
# system-id: 0102.5500.0001     # default: derived from router-id (RFC 1195-style)
log-level: info                 # debug | info | warn | error (default info)
socket: /run/fared/fared.sock   # control API (default /run/fared/fared.sock)

isis:
  areas: [49.0001]              # 1..3 area addresses, dotted hex; required
  level: 2                      # 1 | 2 | 1-2 (default 2)
  path-bandwidth-subtlv: 200    # FARE Path Bandwidth prefix sub-TLV codepoint (default 200)
  lsp-lifetime: 1200s           # 350s..65535s (default 1200s)
  lsp-refresh: 900s             # < lsp-lifetime - 60s (default 900s)
  lsp-gen-interval: 500ms       # default 500ms
  lsp-mtu: 1492                 # 512..9000 (default 1492)
  csnp-interval: 10s            # default 10s
  psnp-interval: 2s             # default 2s
  hello-padding: true           # default true
  overload: false               # default false
  interfaces:
    - name: eth0
      type: p2p                 # p2p | lan (default lan)
      metric: 10                # 1..16777214 (default 10)
      bandwidth: 100G           # default: the interface speed
    - name: eth1
      type: p2p
      bandwidth: 40G
      hello-interval: 1s        # default 3s
      hello-multiplier: 4       # 2..100 (default 3)
    - name: lo
      passive: true             # advertise addresses, send no hellos
      priority: 64              # LAN DIS priority 0..127 (default 64)
  prefixes:
    - prefix: 10.10.1.0/24
      metric: 0                 # 0..4261412864 (default 0)
      path-bandwidth: 40G       # default: no constraint
    - prefix: 2001:db8:1::/48

metrics:                        # Prometheus metrics (docs/metrics.md); omit the section: no listener
  listen: 127.0.0.1:9342        # host:port, required in the section (fared claims no default port)
  path: /metrics                # default /metrics
`
