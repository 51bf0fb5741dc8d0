package main

import (
	"github.com/fared/fared/daemon"
	"github.com/fared/fared/inc"
	"github.com/fared/fared/inof"
	"github.com/fared/fared/isis"
	"github.com/fared/fared/ospf"
	"github.com/fared/fared/qos"
)

// modules is fared's module table: a module runs when its config section
// is present. Adding a module is its package plus one line here.
var modules = []daemon.Spec{
	isis.Spec,
	ospf.Spec,
	qos.Spec,
	inof.Spec,
	inc.Spec,
}
