// Package sample writes a synthetic Proactivity-Gym corpus in the run-log
// format: ten scenarios, the paper's grid of configurations, multi-day
// trajectories, task records, two judges' judgments and human ratings. The
// agents' abilities depend on model family, size, harness and reasoning
// effort, so the analyses have real effects to find. Same seed, same bytes.
package sample

import "math"

// Model is one agent model of the grid.
type Model struct {
	Name, Family string
	SizeB        float64 // 0 when not published
	Open         bool
	Skill        float64 // latent ability on the logit scale
}

// Models are the paper's nine models.
var Models = []Model{
	{"Qwen 3.5 2B", "Qwen", 2, true, -0.9},
	{"Qwen 3.5 9B", "Qwen", 9, true, -0.25},
	{"Qwen 3.5 27B", "Qwen", 27, true, 0.3},
	{"Gemma 4 12B", "Gemma", 12, true, -0.35},
	{"Gemma 4 31B", "Gemma", 31, true, 0.15},
	{"GPT 5.6 Luna", "GPT", 0, false, 0.45},
	{"GPT 5.6 Sol", "GPT", 0, false, 0.8},
	{"Claude Sonnet 5", "Claude", 0, false, 0.6},
	{"Claude Opus 5", "Claude", 0, false, 0.9},
}

// Config is one configuration: (model, harness, reasoning effort).
type Config struct {
	Model   Model
	Harness string
	Effort  string
}

// Skill is the configuration's latent ability: the model's, plus what the
// harness and the reasoning effort add.
func (c Config) Skill() float64 {
	s := c.Model.Skill
	switch c.Harness {
	case "CC":
		s += 0.1
	case "OC":
		if c.Model.Open {
			// Switching CC→OC helps open models, the smaller the more.
			s += 0.1 + 0.35/math.Sqrt(c.Model.SizeB/2)
		} else {
			s += 0.05
		}
	}
	s += map[string]float64{"none": 0, "low": 0.12, "medium": 0.22, "xhigh": 0.3}[c.Effort]
	return s
}

// Grid lists the configurations: open models on CD, CC and OC; GPT on CD
// and OC; Claude on CC and OC (23, all at effort "none"), then the
// reasoning-effort ablation of GPT 5.6 Sol on CD (low, medium, xhigh; its
// "none" is in the main grid).
func Grid() []Config {
	var out []Config
	for _, m := range Models {
		var hs []string
		switch {
		case m.Open:
			hs = []string{"CD", "CC", "OC"}
		case m.Family == "GPT":
			hs = []string{"CD", "OC"}
		default:
			hs = []string{"CC", "OC"}
		}
		for _, h := range hs {
			out = append(out, Config{Model: m, Harness: h, Effort: "none"})
		}
	}
	for _, e := range []string{"low", "medium", "xhigh"} {
		out = append(out, Config{Model: Models[6], Harness: "CD", Effort: e})
	}
	return out
}

// Personas: one per persona group of the paper.
var Personas = []struct{ Name, Group, Label string }{
	{"reviewer", "S", "Reviewer: wants to see options before anything happens"},
	{"planner", "B", "Planner: welcomes drafts and proposals, decides herself"},
	{"operator", "E", "Operator: expects routine work done without asking"},
}

// Domain is one scenario's vocabulary.
type Domain struct {
	Name, Title string
	Objects     []string // what tasks act on
	Keyword     string   // a phrase good answers contain, used nowhere else
}

// Domains are the paper's ten scenario domains.
var Domains = []Domain{
	{"research", "Literature Review Week", []string{"paper", "dataset", "citation", "figure", "manuscript", "review", "seminar"}, "peer-reviewed"},
	{"travel", "Conference Trip", []string{"flight", "hotel", "visa", "train", "itinerary", "insurance"}, "boarding time"},
	{"living", "Moving Flat", []string{"lease", "deposit", "movers", "utilities", "furniture", "address", "cleaning"}, "move-in date"},
	{"food", "Dinner Party", []string{"menu", "groceries", "allergy", "wine", "recipe", "booking"}, "allergen list"},
	{"career", "Job Applications", []string{"resume", "cover_letter", "interview", "reference", "offer", "portfolio"}, "salary range"},
	{"business", "Quarterly Launch", []string{"budget", "vendor", "contract", "invoice", "meeting", "report", "launch"}, "cost centre"},
	{"education", "Course Planning", []string{"syllabus", "enrolment", "assignment", "exam", "tutor", "grades"}, "due date"},
	{"finance", "Tax Season", []string{"receipts", "tax_return", "pension", "savings", "bill", "subscription"}, "tax year"},
	{"shopping", "Monitor Purchase", []string{"monitor", "cable", "warranty", "delivery", "return", "price_alert"}, "price in £"},
	{"health", "Clinic Follow-up", []string{"appointment", "prescription", "referral", "lab_result", "insurance_claim", "reminder"}, "clinic hours"},
}

var verbs = []string{"compare", "check", "plan", "book", "update", "follow_up", "summarise"}
