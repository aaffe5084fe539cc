module mybot

go 1.19
