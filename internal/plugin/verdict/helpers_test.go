package verdict_test

import "github.com/analysis-health/analysis-health/internal/plugin/field"

var mapOf, text = field.Map, field.Text
