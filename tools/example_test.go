package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/surfkit/surf/tools"
)

func ExampleNew() {
	type greetArgs struct {
		Name  string `json:"name" jsonschema:"Who to greet." schema:"minLength=1,maxLength=50"`
		Times int    `json:"times,omitempty" jsonschema:"How many times. Default 1." schema:"minimum=1,maximum=3,default=1"`
	}
	greet := tools.New("greet", "Greet someone.", func(ctx context.Context, in greetArgs) (*tools.Result, error) {
		if in.Name == "Mallory" {
			return nil, tools.Errorf("%s is not welcome here", in.Name)
		}
		return tools.Textf("hello %s x%d", in.Name, in.Times), nil
	})

	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		log.Fatal(err)
	}
	reg.Add(greet)
	fmt.Println(greet.Usage())

	ctx := context.Background()
	for _, c := range []struct{ name, args string }{
		{"greet", `{"name": "Ada"}`},
		{"Assistant_greet", `{"name": "Bob", "times": "2", "reasoning": "be polite"}`},
		{"greet", `{"name": "Mallory"}`},
		{"greet", `{"name": "", "times": 7}`},
		{"wave", `{}`},
	} {
		res, err := reg.Call(ctx, c.name, json.RawMessage(c.args), "greet")
		if err != nil {
			log.Fatal(err) // a runtime error: the run would end here
		}
		fmt.Printf("error=%v ran=%v: %s\n", res.IsError, res.Ran, res.Text)
	}
	// Output:
	// greet(name: string, reasoning?: string, times?: integer)
	// error=false ran=true: hello Ada x1
	// error=false ran=true: hello Bob x2
	// error=true ran=true: Mallory is not welcome here
	// error=true ran=false: invalid arguments for greet: name: must not be empty; times: 7 is above the maximum 3. Usage: greet(name: string, reasoning?: string, times?: integer)
	// error=true ran=false: unknown tool "wave"; available: greet
}

func ExampleSpec_Bind() {
	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		log.Fatal(err)
	}
	reg.Add(tools.Click.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
		return tools.Textf("clicked element %d (%s)", in.TargetID, tools.Reasoning(ctx)), nil
	}))
	res, err := reg.Call(context.Background(), "WebSurfer_click", json.RawMessage(`{"target_id": "12", "reasoning": "the Next link"}`), "click")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Tool, res.Text, string(res.Args))
	// Output:
	// click clicked element 12 (the Next link) {"target_id":12}
}
