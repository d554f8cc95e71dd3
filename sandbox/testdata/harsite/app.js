// Lists the books from books.json: the recording must hold a fetch too.
fetch("books.json")
  .then((r) => r.json())
  .then((books) => {
    const ul = document.getElementById("books");
    for (const b of books) {
      const li = document.createElement("li");
      li.textContent = `${b.title} by ${b.author}`;
      ul.appendChild(li);
    }
    document.getElementById("status").textContent = `loaded ${books.length} books`;
  })
  .catch((e) => {
    document.getElementById("status").textContent = `failed: ${e}`;
  });
