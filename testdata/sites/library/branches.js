// The library's branches: the search and branch pages render from this
// list. byID is the branch the page's ?id= names, if any.
const branches = [
  {id: "harbour", name: "Harbour Branch", address: "12 Quay Street", hours: [
    ["Monday", "9:00 to 17:00"], ["Tuesday", "9:00 to 17:00"], ["Wednesday", "9:00 to 20:00"],
    ["Thursday", "9:00 to 17:00"], ["Friday", "9:00 to 17:00"], ["Saturday", "10:00 to 14:00"], ["Sunday", "closed"]]},
  {id: "central", name: "Central Library", address: "1 Market Square", hours: [
    ["Monday", "8:00 to 20:00"], ["Tuesday", "8:00 to 20:00"], ["Wednesday", "8:00 to 20:00"],
    ["Thursday", "8:00 to 20:00"], ["Friday", "8:00 to 18:00"], ["Saturday", "10:00 to 16:00"], ["Sunday", "closed"]]},
  {id: "hill", name: "Hill Street Reading Room", address: "40 Hill Street", hours: [
    ["Monday", "closed"], ["Tuesday", "10:00 to 16:00"], ["Wednesday", "10:00 to 16:00"],
    ["Thursday", "10:00 to 16:00"], ["Friday", "10:00 to 16:00"], ["Saturday", "closed"], ["Sunday", "closed"]]},
];
const byID = branches.find(b => b.id === new URLSearchParams(location.search).get("id"));
