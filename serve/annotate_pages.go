package serve

// annotateTemplates are the annotation pages. An item page shows what a
// rater needs and nothing that anchors them: no run id, model, harness,
// judge score or other annotator's answer.
const annotateTemplates = `
{{define "annotate-index"}}{{template "head" .}}
<h1>Annotation queues</h1>
{{if .Queues}}<div class="wrap"><table><thead><tr><th>queue</th><th>kind</th><th>questions</th><th class="num">items</th><th class="num">tutorial</th><th class="num">k</th><th class="num">with k annotators</th><th>from</th><th></th></tr></thead><tbody>
{{range .Queues}}<tr><td><a href="{{.Link}}">{{.Name}}</a></td><td>{{.Kind}}</td><td>{{range $i, $q := .Questions}}{{if $i}}, {{end}}{{$q}}{{end}}</td><td class="num">{{.Items}}</td><td class="num">{{.Tutorial}}</td><td class="num">{{.K}}</td><td class="num">{{.Complete}}</td><td>{{.Source}}</td><td><a href="{{.Status}}">status</a></td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No queue yet: make one below, or with <code>gymlens annotate queue</code> (from a sheet of <code>gymlens annotate sample</code>, or the PARE samples ingested).</p>{{end}}
{{if .CanMake}}<h2>A new queue</h2>
<form class="make" method="post" action="/annotate">
<label>name <input name="name" required size="20"></label>
<label>annotators per item (k) <input name="k" value="2" size="3"></label>
<label><input type="checkbox" name="over_assign" value="1"> an item takes answers from more than k annotators</label>
<label>annotators the queue takes at most <input name="max_annotators" value="{{.MaxAnnotators}}" size="6"></label>
<fieldset><legend>items</legend>
{{if .CanSample}}<label><input type="radio" name="source" value="sample" checked> a stratified sample of the runs’ tasks (or the runs)</label>
<label>n <input name="n" value="20" size="4"></label>
<label>unit <select name="unit"><option>task</option><option>run</option></select></label>
<label>stratified by <select name="by"><option value="">(none)</option>{{range .Dimensions}}<option>{{.}}</option>{{end}}</select></label>
<label>where DIM=VALUE; … <input name="where" size="30"></label>
<label>questions <input name="questions" value="trj.understandability,trj.competence,trj.reliability,trj.attachment,trj.faith,tc" size="60"></label>
<label>practice items first <input name="tutorial" value="1" size="3"></label>
<label>seed <input name="seed" value="1" size="6"></label>{{end}}
<label><input type="radio" name="source" value="pare"{{if not .CanSample}} checked{{end}}> the PARE annotation samples ingested (accept / reject / gather context; PARE’s tutorial samples first)</label>
</fieldset>
<button type="submit">Make the queue</button></form>{{end}}
{{template "foot" .}}{{end}}

{{define "annotate-name"}}{{template "head" .}}
<h1>Annotate: {{.Queue.Name}}</h1>
<p>Each item shows what the user of an assistant saw; you answer {{len .Queue.Questions}} question{{if ne (len .Queue.Questions) 1}}s{{end}} about it. Your answers are saved as you go and you may change them later.</p>
<form class="filter" method="get" action="{{.Base}}"><label>your name<input name="annotator" required size="24" maxlength="64"></label><button type="submit">Start</button></form>
{{template "foot" .}}{{end}}

{{define "annotate-done"}}{{template "head" .}}
<h1>Annotate: {{.Queue.Name}}</h1>
<p>Thank you, {{.Annotator}}: nothing is left for you in this queue.</p>
{{if .Done}}<p>Your answers (open one to change it): {{range .Done}}<a href="{{$.Base}}/items/{{.N}}">{{.Label}}</a> {{end}}</p>{{end}}
{{template "foot" .}}{{end}}

{{define "annotate-item"}}{{template "head" .}}
<h1>{{.Queue.Name}} · {{.Place}}</h1>
<p class="note">Annotating as <strong>{{.Annotator}}</strong>{{if not .Fixed}} · <a href="{{.Base}}?annotator=">not you?</a>{{end}}{{if .Done}} · answered: you may change your answers{{end}}</p>
{{if .Item.Tutorial}}<p class="tutorial">A practice item{{if .Item.Key}}: once you answer, the reference answer is shown{{end}}. Practice answers do not count in the agreement.</p>{{end}}
{{if .Item.Task}}<p>Task: <strong>{{.Item.Task}}</strong></p>{{end}}
<h2>{{if eq .Queue.Kind "pare"}}The assistant’s proposal{{else}}What the user saw{{end}}</h2>
{{if .Item.Context}}<pre class="context">{{.Item.Context}}</pre>{{else}}<p class="note">This item came without context.</p>{{end}}
<form class="answers" method="post" action="{{.Action}}">
{{range .Questions}}<fieldset><legend>{{.Prompt}} <span class="muted">({{.Question}})</span></legend>
{{$q := .}}{{if .Choices}}{{range .Choices}}<label class="choice"><input type="radio" name="q:{{$q.Question}}" value="{{.Value}}"{{if checked $q.Given .Value}} checked{{end}} required> {{.Label}}</label>
{{end}}{{else}}<input name="q:{{.Question}}" value="{{.Given}}" inputmode="decimal" required>{{end}}
{{if .Key}}<p class="{{if .Match}}match{{else}}flag{{end}}">Reference answer: {{.Key}}{{if .Match}} — the same as yours{{else}} — yours: {{.Given}}{{end}}</p>{{end}}
</fieldset>
{{end}}<label class="comment">a comment (optional; stored with your answers and exported)<textarea name="comment" rows="2" maxlength="{{.MaxComment}}">{{.Comment}}</textarea></label>
{{if .Skipped}}<p class="note">You skipped this item (cannot answer); answer it to change that.</p>{{end}}
<button type="submit">{{if .Done}}Save the change{{else if .ShowsKey}}Save and see the reference answer{{else}}Save and go on{{end}}</button>
<button type="submit" name="skip" value="1" formnovalidate>Skip: I cannot answer this item</button></form>
{{if and .Item.Tutorial .Done}}<p><a href="{{.Base}}">go on to the next item</a></p>{{end}}
{{template "foot" .}}{{end}}

{{define "annotate-status"}}{{template "head" .}}
{{$s := .S}}<h1>Status: {{$s.Queue}}</h1>
<p>{{$s.Items}} items{{if $s.Tutorial}} (and {{$s.Tutorial}} practice){{end}}, each needing {{$s.K}} annotator{{if ne $s.K 1}}s{{end}}{{if $s.OverAssign}} (and taking more){{end}}: <strong>{{$s.Complete}}</strong> have them. <a href="{{.Base}}">annotate</a> · <a href="/api/annotate/{{$s.Queue}}/status?page={{$s.Page}}">JSON</a></p>
<h2>Annotators</h2>
<p class="note">{{$s.AnnotatorsTotal}} of the {{$s.MaxAnnotators}} the queue takes{{if gt $s.Pages 1}}; page {{$s.Page}} of {{$s.Pages}}{{if .Prev}} · <a href="{{.Prev}}">previous</a>{{end}}{{if .Next}} · <a href="{{.Next}}">next</a>{{end}}{{end}}</p>
{{if $s.Annotators}}<div class="wrap"><table><thead><tr><th>annotator</th><th class="num">items done</th><th class="num">practice done</th><th class="num">practice answers matching the key</th></tr></thead><tbody>
{{range $s.Annotators}}<tr><td>{{.Annotator}}</td><td class="num">{{.Done}}</td><td class="num">{{.Tutorial}}</td><td class="num">{{if .KeyAnswers}}{{.KeyAgree}} of {{.KeyAnswers}}{{else}}–{{end}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">No answers yet.</p>{{end}}
<form class="filter" method="get" action="{{.Base}}/status"><label>a link for an annotator named<input name="link" required size="20" maxlength="64"></label><button type="submit">Make the link</button></form>
{{if .Link}}<p>{{.LinkFor}}’s link{{if .Token}} (theirs alone: it opens this queue only, as {{.LinkFor}}){{end}}: <code class="link">{{.Link}}</code></p>{{end}}
<h2>Agreement among the annotators</h2>
{{template "figures" $s.Among}}
{{if $s.Among}}<p class="note">n: the items two annotators or more answered (on that question).</p>{{end}}
<h2>Against {{$s.Versus}}</h2>
{{template "figures" $s.Against}}
{{if $s.Against}}<p class="note">n: the items both sides scored on that question (for the configurations' means: the configurations); it differs between questions and statistics as their answers and scores do.</p>{{end}}
{{range $s.Notes}}<p class="note">{{.}}</p>{{end}}
{{template "foot" .}}{{end}}

{{define "figures"}}{{if .}}<div class="wrap"><table><thead><tr><th>question</th><th>statistic</th><th class="num">n</th><th class="num">value</th><th class="num">interval</th><th></th></tr></thead><tbody>
{{range .}}<tr><td>{{.Question}}</td><td>{{.Stat}}</td><td class="num">{{.N}}</td><td class="num">{{fig .Value}}</td><td class="num">{{if .Lo}}[{{fig .Lo}}, {{fig .Hi}}]{{end}}</td><td class="note">{{.Note}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">Not yet: it needs items with answers from two annotators or more.</p>{{end}}{{end}}
`
